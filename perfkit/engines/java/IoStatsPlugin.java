package perfkit.spark;

import java.io.Serializable;
import java.net.URI;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StorageStatistics;
import org.apache.hadoop.fs.statistics.IOStatisticsSource;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * What Spark's executors asked of the storages, for perfkit's per-run I/O on a cluster (spark.plugins).
 *
 * Each executor, after each of its tasks (on the task's thread, before Spark reports the task done), sends the driver
 * its JVM's cumulative counters: the S3A IOStatistics of each watched bucket's file system (the instance the tasks
 * read through: Hadoop caches one per bucket and user) and HDFS's client statistics. The driver keeps each executor's
 * latest report; perfkit reads their sum before and after a run (totals) once every ended task has reported
 * (pending), as it reads the driver's own counters in local mode. Queries run one at a time, so the difference is
 * the run's.
 */
public class IoStatsPlugin implements SparkPlugin {
    static final String BUCKETS = "spark.perfkit.io.buckets";  // s3a buckets to watch, comma-separated

    private static final Map<String, Report> LATEST = new ConcurrentHashMap<>();
    private static final Map<String, AtomicLong> ENDED = new ConcurrentHashMap<>();
    private static final AtomicLong ACTIVE_JOBS = new AtomicLong();

    @Override
    public DriverPlugin driverPlugin() {
        return new Driver();
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new Executor();
    }

    /** The executors' counters summed, as Java's Map.toString: {name=value, ...}. */
    public static String totals() {
        Map<String, Long> sum = new TreeMap<>();
        for (Report report : LATEST.values()) {
            report.counters.forEach((name, value) -> sum.merge(name, value, Long::sum));
        }
        return sum.toString();
    }

    /** Tasks that ended (as the driver saw them) whose executor has not reported them yet, plus running jobs. */
    public static long pending() {
        long missing = ACTIVE_JOBS.get();
        for (Map.Entry<String, AtomicLong> ended : ENDED.entrySet()) {
            Report report = LATEST.get(ended.getKey());
            missing += Math.max(0, ended.getValue().get() - (report == null ? 0 : report.tasks));
        }
        return missing;
    }

    /** How many executors have reported. */
    public static int executors() {
        return LATEST.size();
    }

    static final class Report implements Serializable {
        private static final long serialVersionUID = 1L;
        final String executorId;
        final long tasks;
        final HashMap<String, Long> counters;

        Report(String executorId, long tasks, HashMap<String, Long> counters) {
            this.executorId = executorId;
            this.tasks = tasks;
            this.counters = counters;
        }
    }

    static final class Driver implements DriverPlugin {
        @Override
        public Map<String, String> init(SparkContext sc, PluginContext ctx) {
            LATEST.clear();
            ENDED.clear();
            ACTIVE_JOBS.set(0);
            sc.addSparkListener(new SparkListener() {
                @Override
                public void onJobStart(SparkListenerJobStart event) {
                    ACTIVE_JOBS.incrementAndGet();
                }

                @Override
                public void onJobEnd(SparkListenerJobEnd event) {
                    ACTIVE_JOBS.decrementAndGet();
                }

                @Override
                public void onTaskEnd(SparkListenerTaskEnd event) {
                    ENDED.computeIfAbsent(event.taskInfo().executorId(), id -> new AtomicLong()).incrementAndGet();
                }
            });
            return Collections.singletonMap("buckets", sc.getConf().get(BUCKETS, ""));
        }

        @Override
        public Object receive(Object message) {
            if (message instanceof Report) {
                Report report = (Report) message;
                LATEST.merge(report.executorId, report, (old, now) -> now.tasks >= old.tasks ? now : old);
            }
            return null;
        }
    }

    static final class Executor implements ExecutorPlugin {
        private PluginContext ctx;
        private Configuration conf;
        private String[] buckets = new String[0];
        private final AtomicLong tasks = new AtomicLong();

        @Override
        public void init(PluginContext ctx, Map<String, String> extraConf) {
            this.ctx = ctx;
            conf = new Configuration();
            for (scala.Tuple2<String, String> kv : ctx.conf().getAll()) {
                if (kv._1().startsWith("spark.hadoop.")) {
                    conf.set(kv._1().substring("spark.hadoop.".length()), kv._2());
                }
            }
            String watched = extraConf.getOrDefault("buckets", "");
            buckets = watched.isEmpty() ? new String[0] : watched.split(",");
        }

        @Override
        public void onTaskSucceeded() {
            report();
        }

        @Override
        public void onTaskFailed(TaskFailedReason reason) {
            report();
        }

        private void report() {
            try {
                ctx.send(new Report(ctx.executorID(), tasks.incrementAndGet(), snapshot()));
            } catch (Exception e) {
                // the counters are perfkit's, the task is the query's: never fail a task over them
            }
        }

        private HashMap<String, Long> snapshot() throws java.io.IOException {
            HashMap<String, Long> found = new HashMap<>();
            StorageStatistics hdfs = FileSystem.getGlobalStorageStatistics().get("hdfs");
            if (hdfs != null) {
                found.put("hdfs.bytesRead", orZero(hdfs.getLong("bytesRead")));
                found.put("hdfs.bytesWritten", orZero(hdfs.getLong("bytesWritten")));
            }
            // only once this JVM has made an S3A file system: never one of its own just to read its counters
            if (FileSystem.getGlobalStorageStatistics().get("s3a") != null) {
                for (String bucket : buckets) {
                    FileSystem fs = FileSystem.get(URI.create("s3a://" + bucket + "/"), conf);
                    if (fs instanceof IOStatisticsSource && ((IOStatisticsSource) fs).getIOStatistics() != null) {
                        ((IOStatisticsSource) fs).getIOStatistics().counters()
                            .forEach((name, value) -> found.merge("s3a." + name, value, Long::sum));
                    }
                }
            }
            return found;
        }

        private static long orZero(Long value) {
            return value == null ? 0 : value;
        }
    }
}
