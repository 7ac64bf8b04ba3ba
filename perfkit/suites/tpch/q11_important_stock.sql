-- TPC-H Q11: Important stock identification
select ps_partkey, sum(ps_supplycost * ps_availqty) as part_value
from {table:partsupp}, {table:supplier}, {table:nation}
where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = 'GERMANY'
group by ps_partkey
having sum(ps_supplycost * ps_availqty) > (
  select sum(ps_supplycost * ps_availqty) * 0.0001
  from {table:partsupp}, {table:supplier}, {table:nation}
  where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = 'GERMANY')
order by part_value desc
