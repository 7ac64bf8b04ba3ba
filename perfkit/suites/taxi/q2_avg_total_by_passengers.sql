SELECT passenger_count, avg(total_amount) AS avg_total
FROM {table}
GROUP BY passenger_count
