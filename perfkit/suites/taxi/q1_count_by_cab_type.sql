SELECT cab_type, count(*) AS trips
FROM {table}
GROUP BY cab_type
