package binlogtemporal;

import java.io.BufferedWriter;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.json.JsonConverterConfig;
import org.apache.kafka.connect.storage.FileOffsetBackingStore;
import org.apache.kafka.connect.storage.OffsetStorageWriter;

import io.debezium.embedded.EmbeddedEngineChangeEvent;
import io.debezium.embedded.EmbeddedWorkerConfig;
import io.debezium.embedded.KafkaConnectUtil;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;

/**
 * Debezium's MariaDB connector in the embedded engine, as a pipeline runs it: the
 * properties from a file and the command line, every change event written as one JSON
 * line (flushed at once), until SIGTERM (a clean stop: the engine commits its offsets)
 * or until the engine stops by itself (an error).
 *
 * <pre>
 * java -jar debezium-runner.jar --output FILE|- [--properties FILE] [name=value ...]
 * </pre>
 *
 * Each line is {"topic": ..., "offset": OFFSET, "key": KEY, "value": VALUE} with KEY and
 * VALUE as the engine's JSON converter gives them (schema and payload unless the
 * properties say otherwise) and OFFSET the connector's offset after the record (file,
 * pos, gtids...: where it would resume; a heartbeat's tells how far it has read), or a
 * line about the engine itself: {"engine": "started"},
 * {"engine": "completed", "success": ..., "message": ..., "error": ...}.  The exit status
 * is 0 when the engine completed successfully, 1 when it failed, 2 on bad usage.
 *
 * <p>{@code runner.offset.file}, {@code runner.offset.pos} and {@code runner.offset.gtids}
 * (the harness's own, not passed to the engine) write a start offset into the file offset
 * store before the engine starts, as an operator does to skip a transaction the connector
 * cannot read: the MariaDB connector then resumes after that GTID set.
 */
public final class DebeziumRunner {

    private DebeziumRunner() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        String output = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--output") && i + 1 < args.length) {
                output = args[++i];
            }
            else if (arg.equals("--properties") && i + 1 < args.length) {
                try (InputStream in = new FileInputStream(args[++i])) {
                    props.load(in);
                }
            }
            else if (arg.indexOf('=') > 0) {
                props.setProperty(arg.substring(0, arg.indexOf('=')), arg.substring(arg.indexOf('=') + 1));
            }
            else {
                System.err.println("usage: debezium-runner --output FILE|- [--properties FILE] [name=value ...]");
                System.exit(2);
            }
        }
        if (output == null) {
            System.err.println("debezium-runner: --output is required");
            System.exit(2);
        }
        System.exit(run(props, output) ? 0 : 1);
    }

    private static boolean run(Properties props, String output) throws Exception {
        writeStartOffset(props);
        Writer out = new BufferedWriter(new OutputStreamWriter(
                output.equals("-") ? System.out : new FileOutputStream(output, true), StandardCharsets.UTF_8));
        Lines lines = new Lines(out);
        CountDownLatch done = new CountDownLatch(1);
        boolean[] success = {false};
        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
                .using(props)
                .using(new DebeziumEngine.ConnectorCallback() {
                    @Override
                    public void taskStarted() {
                        lines.write("{\"engine\":\"started\"}");
                    }
                })
                .using((ok, message, error) -> {
                    success[0] = ok;
                    lines.write("{\"engine\":\"completed\",\"success\":" + ok + ",\"message\":" + quote(message)
                            + ",\"error\":" + quote(causes(error)) + "}");
                    done.countDown();
                })
                .notifying(record -> lines.write("{\"topic\":" + quote(record.destination())
                        + ",\"offset\":" + offset(record) + ",\"key\":" + orNull(record.key())
                        + ",\"value\":" + orNull(record.value()) + "}"))
                .build();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // SIGTERM: stop as a deployment stops it (offsets committed), then let main end
            try {
                engine.close();
                done.await(60, TimeUnit.SECONDS);
            }
            catch (IOException | InterruptedException e) {
                System.err.println("debezium-runner: stopping the engine: " + e);
            }
        }));
        executor.execute(engine);
        done.await();
        executor.shutdown();
        lines.close();
        return success[0];
    }

    /**
     * The offset the engine starts from, written as the embedded engine writes its own
     * (AsyncEmbeddedEngine: an OffsetStorageWriter over the store, namespace the engine's
     * name, key and value by a JsonConverter without schemas; the MariaDB connector's
     * partition is {"server": topic.prefix}, BinlogPartition).
     */
    private static void writeStartOffset(Properties props) throws Exception {
        String gtids = (String) props.remove("runner.offset.gtids");
        String file = (String) props.remove("runner.offset.file");
        String pos = (String) props.remove("runner.offset.pos");
        if (gtids == null && file == null) {
            return;
        }
        Map<String, String> config = new HashMap<>();
        for (String name : props.stringPropertyNames()) {
            config.put(name, props.getProperty(name));
        }
        FileOffsetBackingStore store = KafkaConnectUtil.fileOffsetBackingStore();
        store.configure(new EmbeddedWorkerConfig(config));
        store.start();
        try {
            JsonConverter keys = new JsonConverter();
            keys.configure(Collections.singletonMap(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false"), true);
            JsonConverter values = new JsonConverter();
            values.configure(Collections.singletonMap(JsonConverterConfig.SCHEMAS_ENABLE_CONFIG, "false"), false);
            OffsetStorageWriter writer = new OffsetStorageWriter(store, props.getProperty("name"), keys, values);
            Map<String, Object> offset = new HashMap<>();
            offset.put("file", file);
            offset.put("pos", Long.parseLong(pos == null ? "4" : pos));
            if (gtids != null) {
                offset.put("gtids", gtids);
            }
            writer.offset(Collections.singletonMap("server", props.getProperty("topic.prefix")), offset);
            writer.beginFlush();
            writer.doFlush((error, ignored) -> {
                if (error != null) {
                    System.err.println("debezium-runner: writing the start offset: " + error);
                }
            }).get(30, TimeUnit.SECONDS);
        }
        finally {
            store.stop();
        }
    }

    /** Every message of an error's chain of causes, outermost first (null for none). */
    private static String causes(Throwable error) {
        if (error == null) {
            return null;
        }
        StringBuilder text = new StringBuilder();
        for (Throwable e = error; e != null; e = e.getCause() == e ? null : e.getCause()) {
            if (text.length() > 0) {
                text.append(" <- ");
            }
            text.append(e.getClass().getName()).append(": ").append(e.getMessage());
        }
        return text.toString();
    }

    /** The record's source offset as a JSON object of its strings and numbers (null if unknown). */
    private static String offset(ChangeEvent<String, String> record) {
        if (!(record instanceof EmbeddedEngineChangeEvent)) {
            return "null";
        }
        Map<String, ?> offset = ((EmbeddedEngineChangeEvent<?, ?, ?>) record).sourceRecord().sourceOffset();
        if (offset == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder("{");
        for (Map.Entry<String, ?> entry : new TreeMap<String, Object>(offset).entrySet()) {
            Object value = entry.getValue();
            out.append(out.length() > 1 ? "," : "").append(quote(entry.getKey())).append(':')
                    .append(value instanceof Number || value instanceof Boolean ? value.toString()
                            : quote(value == null ? null : value.toString()));
        }
        return out.append('}').toString();
    }

    private static String orNull(String json) {
        return json == null ? "null" : json;
    }

    /** A JSON string (RFC 8259: quote, backslash and control characters escaped). */
    static String quote(String text) {
        if (text == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(text.length() + 2).append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            }
            else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            }
            else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    /** One line at a time from any thread, flushed at once (a test reads the file as it grows). */
    private static final class Lines {
        private final Writer out;

        Lines(Writer out) {
            this.out = out;
        }

        synchronized void write(String line) {
            try {
                out.write(line);
                out.write('\n');
                out.flush();
            }
            catch (IOException e) {
                throw new IllegalStateException("debezium-runner: writing the output: " + e, e);
            }
        }

        synchronized void close() throws IOException {
            out.close();
        }
    }
}
