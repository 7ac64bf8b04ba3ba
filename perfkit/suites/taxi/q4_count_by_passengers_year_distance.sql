SELECT passenger_count, year(pickup_datetime) AS trip_year, round(trip_distance) AS distance, count(*) AS trips
FROM {table}
GROUP BY passenger_count, year(pickup_datetime), round(trip_distance)
ORDER BY trip_year, trips DESC
