-- HiBench join (its INSERT OVERWRITE of rankings_uservisits_join, as a query returning the rows)
-- why: Trino has no datediff(end, start); date_diff('day', start, end) is the same day count
SELECT sourceip, avg(pagerank), sum(adrevenue) AS totalrevenue
FROM {table:rankings} R JOIN (
  SELECT sourceip, desturl, adrevenue FROM {table:uservisits} UV
  WHERE (date_diff('day', DATE '1999-01-01', CAST(UV.visitdate AS DATE)) >= 0
         AND date_diff('day', DATE '2000-01-01', CAST(UV.visitdate AS DATE)) <= 0)) NUV
ON (R.pageurl = NUV.desturl)
GROUP BY sourceip ORDER BY totalrevenue DESC
