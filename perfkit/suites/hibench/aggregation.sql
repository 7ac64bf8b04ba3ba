-- HiBench aggregation
INSERT OVERWRITE TABLE {table:uservisits_aggre} SELECT sourceip, SUM(adrevenue) FROM {table:uservisits} GROUP BY sourceip
