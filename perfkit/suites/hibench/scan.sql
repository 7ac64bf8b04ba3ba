-- HiBench scan
INSERT OVERWRITE TABLE {table:uservisits_copy} SELECT * FROM {table:uservisits}
