-- HiBench join (its INSERT OVERWRITE of rankings_uservisits_join, as a query returning the rows)
SELECT sourceip, avg(pagerank), sum(adrevenue) AS totalrevenue
FROM {table:rankings} R JOIN (
  SELECT sourceip, desturl, adrevenue FROM {table:uservisits} UV
  WHERE (datediff(UV.visitdate, '1999-01-01') >= 0 AND datediff(UV.visitdate, '2000-01-01') <= 0)) NUV
ON (R.pageurl = NUV.desturl)
GROUP BY sourceip ORDER BY totalrevenue DESC
