SELECT passenger_count, year(pickup_datetime) AS trip_year, count(*) AS trips
FROM {table}
GROUP BY passenger_count, year(pickup_datetime)
