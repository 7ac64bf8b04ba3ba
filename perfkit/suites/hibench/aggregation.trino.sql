-- HiBench aggregation
-- why: Trino has no INSERT OVERWRITE; the target is created empty before every run, so INSERT INTO writes the same
INSERT INTO {table:uservisits_aggre} SELECT sourceip, SUM(adrevenue) FROM {table:uservisits} GROUP BY sourceip
