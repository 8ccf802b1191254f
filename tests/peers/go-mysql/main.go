// gomysql-peer: go-mysql's replication package configured as TiDB DM configures it, printing
// one JSON line per row change with the values as go-mysql gives them.
//
// Two modes, the two ways DM reads a binlog:
//
//   - file: DM's relay-log reader (pingcap/tiflow dm/relay/local_reader.go, newBinlogReader and
//     parseFile): replication.NewBinlogParser() with SetVerifyChecksum(true), SetUseDecimal(false)
//     and SetTimestampStringLocation(the task's time zone); ParseTime stays off, so temporals
//     come out as go-mysql's strings. A file is checked for the binlog magic, its
//     FORMAT_DESCRIPTION read first when it starts past 4 (parseFormatDescEvent), then
//     parser.ParseReader reads it from the offset.
//   - network: DM's syncer (dm/syncer/util.go subtaskCfg2BinlogSyncerCfg with
//     dm/pkg/binlog/common/replication.go SetDefaultReplicationCfg(cfg, 1)): Flavor, ServerID,
//     TimestampStringLocation, UseDecimal false, VerifyChecksum true, MaxReconnectAttempts 1 with
//     DisableRetrySync, ReadTimeout 1 min, HeartbeatPeriod 30 s; with -relay, DM's relay
//     (dm/relay/relay.go) instead: MaxReconnectAttempts 60 and, for MariaDB, the dump flag
//     BINLOG_SEND_ANNOTATE_ROWS_EVENT. StartSync by file/position or StartSyncGTID by a
//     MariaDB GTID set.
//
// Output (stdout), one JSON object a line:
//
//	{"kind":"row","file":F,"pos":END,"gtid":G,"type":T,"schema":S,"table":N,"op":"insert|update|delete",
//	 "before":[...]|null,"after":[...]|null,"columns":[names]|null}
//	{"kind":"generic","file":F,"pos":END,"type":T}     an event go-mysql leaves undecoded
//	{"kind":"end","file":F,"pos":END,"gtid":G,"rows":N}  reached -stop-file/-stop-pos or the files' end
//	{"kind":"error","file":F,"pos":END,"gtid":G,"error":MSG}  go-mysql's error (exit 1); pos: the end
//	                                                     of the last event it read, gtid: the
//	                                                     transaction it was in
//
// Values: nil -> null, strings -> strings (not valid UTF-8: {"hex":...}), integers and floats
// -> numbers, []byte -> {"hex":...}, anything else -> {"go":"%T","value":"%v"}.
// A panic that go-mysql does not recover ends the process as Go does (exit 2, "panic:" on stderr).
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
)

// dumpFlagSendAnnotateRowsEvent: dm/relay/relay.go (BINLOG_SEND_ANNOTATE_ROWS_EVENT)
const dumpFlagSendAnnotateRowsEvent uint16 = 0x02

var ops = map[byte]string{
	20: "insert", 23: "insert", 30: "insert", 166: "insert", 169: "insert",
	21: "update", 24: "update", 31: "update", 167: "update", 170: "update",
	22: "delete", 25: "delete", 32: "delete", 168: "delete", 171: "delete",
}

type output struct {
	enc      *json.Encoder
	file     string
	pos      uint32
	gtid     string
	rows     int
	stopFile string
	stopPos  uint32
	// the rows of the transaction being read, printed when it ends (XID or a statement
	// other than BEGIN); where the last one ended (DM's checkpoint: its GlobalPoint)
	pending []map[string]interface{}
	txnFile string
	txnPos  uint32
	txnGTID string
}

func (o *output) emit(v map[string]interface{}) {
	if err := o.enc.Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "gomysql-peer: writing stdout:", err)
		os.Exit(3)
	}
}

func value(v interface{}) interface{} {
	switch x := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return x
	case string:
		if utf8.ValidString(x) {
			return x
		}
		return map[string]string{"hex": hex.EncodeToString([]byte(x))}
	case []byte:
		return map[string]string{"hex": hex.EncodeToString(x)}
	default:
		return map[string]string{"go": fmt.Sprintf("%T", x), "value": fmt.Sprintf("%v", x)}
	}
}

func values(row []interface{}) []interface{} {
	out := make([]interface{}, len(row))
	for i, v := range row {
		out[i] = value(v)
	}
	return out
}

func names(table *replication.TableMapEvent) interface{} {
	if table == nil || len(table.ColumnName) == 0 {
		return nil
	}
	out := make([]string, len(table.ColumnName))
	for i, n := range table.ColumnName {
		out[i] = string(n)
	}
	return out
}

// event prints what one event gives; true once the stop position is reached.
func (o *output) event(e *replication.BinlogEvent) bool {
	h := e.Header
	// the stop position is in the file this event belongs to (a ROTATE then names the next)
	reached := o.stopFile != "" && h.LogPos != 0 && o.file == o.stopFile && h.LogPos >= o.stopPos
	if h.LogPos != 0 {
		o.pos = h.LogPos
	}
	switch ev := e.Event.(type) {
	case *replication.RotateEvent:
		o.file = string(ev.NextLogName)
		o.pos = uint32(ev.Position)
	case *replication.MariadbGTIDEvent:
		o.gtid = ev.GTID.String()
	case *replication.XIDEvent:
		o.commit()
	case *replication.QueryEvent:
		if string(ev.Query) != "BEGIN" {
			o.commit()
		}
	case *replication.RowsEvent:
		o.rows += o.rowsEvent(byte(h.EventType), ev)
	case *replication.GenericEvent:
		o.emit(map[string]interface{}{"kind": "generic", "file": o.file, "pos": h.LogPos, "type": byte(h.EventType)})
	}
	return reached
}

func (o *output) rowsEvent(code byte, ev *replication.RowsEvent) int {
	op := ops[code]
	var schema, table string
	if ev.Table != nil {
		schema, table = string(ev.Table.Schema), string(ev.Table.Table)
	}
	step := 1
	if op == "update" {
		step = 2 // before image, after image
	}
	count := 0
	for i := 0; i+step <= len(ev.Rows); i += step {
		line := map[string]interface{}{"kind": "row", "file": o.file, "pos": o.pos, "gtid": o.gtid, "type": code,
			"schema": schema, "table": table, "op": op, "before": nil, "after": nil, "columns": names(ev.Table)}
		switch op {
		case "insert":
			line["after"] = values(ev.Rows[i])
		case "delete":
			line["before"] = values(ev.Rows[i])
		default:
			line["before"], line["after"] = values(ev.Rows[i]), values(ev.Rows[i+1])
		}
		o.pending = append(o.pending, line)
		count++
	}
	return count
}

// commit prints the transaction's rows: it ended here.
func (o *output) commit() {
	for _, line := range o.pending {
		o.emit(line)
	}
	o.pending = nil
	o.txnFile, o.txnPos, o.txnGTID = o.file, o.pos, o.gtid
}

func (o *output) fail(err error) {
	for _, line := range o.pending { // what go-mysql gave of the transaction it failed in
		o.emit(line)
	}
	o.emit(map[string]interface{}{"kind": "error", "file": o.file, "pos": o.pos, "gtid": o.gtid, "error": err.Error()})
	os.Exit(1)
}

func (o *output) end() {
	o.commit()
	o.emit(map[string]interface{}{"kind": "end", "file": o.file, "pos": o.pos, "gtid": o.gtid, "rows": o.rows})
}

var errStop = errors.New("stop position reached")

// readFiles: DM's relay-log reader over binlog files (dm/relay/local_reader.go).
func readFiles(o *output, loc *time.Location, offset int64, files []string) error {
	parser := replication.NewBinlogParser()
	parser.SetVerifyChecksum(true)
	// "use string representation of decimal, to replicate the exact value"
	parser.SetUseDecimal(false)
	parser.SetTimestampStringLocation(loc)
	onEvent := func(e *replication.BinlogEvent) error {
		if o.event(e) {
			return errStop
		}
		return nil
	}
	for i, name := range files {
		start := int64(4)
		if i == 0 && offset > 4 {
			start = offset
		}
		o.file, o.pos = baseName(name), uint32(start)
		if err := readFile(parser, name, start, onEvent); err != nil {
			return err
		}
	}
	return nil
}

func readFile(parser *replication.BinlogParser, name string, offset int64, onEvent replication.OnEventFunc) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil {
		return fmt.Errorf("%s: reading the binlog magic: %w", name, err)
	}
	if string(magic) != "\xfebin" {
		return fmt.Errorf("%s: not a binlog file (magic %q)", name, magic)
	}
	if offset > 4 {
		// local_reader.go parseFormatDescEvent: the parser needs the FORMAT_DESCRIPTION
		if _, err := parser.ParseSingleEvent(f, func(e *replication.BinlogEvent) error { return nil }); err != nil {
			return fmt.Errorf("parse FormatDescriptionEvent: %w", err)
		}
		if _, err := f.Seek(offset, io.SeekStart); err != nil {
			return err
		}
	}
	err = parser.ParseReader(f, onEvent)
	if errors.Is(err, errStop) {
		return errStop
	}
	return err
}

func baseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

// readNetwork: DM's syncer (or, with relay, DM's relay) as a replica of host:port.
func readNetwork(o *output, cfg replication.BinlogSyncerConfig, relay bool, startFile string, startPos uint,
	gtid string, timeout time.Duration) error {
	// dm/pkg/binlog/common/replication.go SetDefaultReplicationCfg
	cfg.UseDecimal = false
	cfg.VerifyChecksum = true
	cfg.ReadTimeout = 1 * time.Minute
	cfg.HeartbeatPeriod = 30 * time.Second
	if relay {
		cfg.MaxReconnectAttempts = 60
		if cfg.Flavor == mysql.MariaDBFlavor {
			cfg.DumpCommandFlag |= dumpFlagSendAnnotateRowsEvent
		}
	} else {
		// dm/syncer/util.go: "just set retry count = 1, and task will exit when meet error"
		cfg.MaxReconnectAttempts = 1
		cfg.DisableRetrySync = true
	}
	setLogger(&cfg)
	deadline := time.Now().Add(timeout)
	o.file, o.pos = startFile, uint32(startPos)
	o.txnFile, o.txnPos = startFile, uint32(startPos)
	for restarts := 0; ; restarts++ {
		done, err := follow(o, cfg, startFile, uint32(startPos), gtid, deadline)
		if done || err == nil {
			return err
		}
		// dm/syncer/syncer.go: on an error from the binlog stream the syncer resets the
		// replication from its checkpoint, the end of the last finished transaction
		// (ResetReplicationSyncer(checkpoint.GlobalPoint())), and DM's auto-resume restarts
		// a paused task from there too.  go-mysql's streamer hands the error over at random
		// before or after the events parsed ahead of it (GetEvent selects over both
		// channels): the error is final once every event before the failing one was read.
		failing := eventError(err)
		if failing == nil || failing.Header.LogPos-failing.Header.EventSize == o.pos || restarts >= maxRestarts {
			return err
		}
		if o.txnFile != "" { // else no transaction ended yet: from the same GTID again
			startFile, startPos, gtid = o.txnFile, uint(o.txnPos), ""
		}
		o.file, o.pos, o.pending = o.txnFile, o.txnPos, nil
	}
}

const maxRestarts = 1000

// eventError: the event go-mysql failed to parse, through errors.Trace's wrapping.
func eventError(err error) *replication.EventError {
	for err != nil {
		if found, ok := err.(*replication.EventError); ok {
			return found
		}
		switch wrapped := err.(type) {
		case interface{ Cause() error }:
			if wrapped.Cause() == err {
				return nil
			}
			err = wrapped.Cause()
		case interface{ Unwrap() error }:
			err = wrapped.Unwrap()
		default:
			return nil
		}
	}
	return nil
}

// follow reads one connection's stream: done when the stop position was reached or an
// error is final.
func follow(o *output, cfg replication.BinlogSyncerConfig, startFile string, startPos uint32, gtid string,
	deadline time.Time) (bool, error) {
	syncer := replication.NewBinlogSyncer(cfg)
	defer syncer.Close()
	var streamer *replication.BinlogStreamer
	var err error
	if gtid != "" || startFile == "" {
		set, perr := mysql.ParseGTIDSet(cfg.Flavor, gtid)
		if perr != nil {
			return true, perr
		}
		streamer, err = syncer.StartSyncGTID(set)
	} else {
		streamer, err = syncer.StartSync(mysql.Position{Name: startFile, Pos: startPos})
	}
	if err != nil {
		return true, err
	}
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		e, err := streamer.GetEvent(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return true, fmt.Errorf("no stop position by the deadline (at %s:%d)", o.file, o.pos)
		}
		if err != nil {
			return false, err
		}
		if o.event(e) {
			return true, nil
		}
	}
}

func main() {
	mode := flag.String("mode", "", "file | network")
	offset := flag.Int64("offset", 4, "file: start offset in the first file")
	host := flag.String("host", "127.0.0.1", "network: host")
	port := flag.Uint("port", 3306, "network: port")
	user := flag.String("user", "root", "network: user")
	password := flag.String("password", "", "network: password (or $GOMYSQL_PEER_PASSWORD)")
	flavor := flag.String("flavor", mysql.MariaDBFlavor, "network: mysql | mariadb")
	serverID := flag.Uint("server-id", 4242, "network: the replica's server id")
	startFile := flag.String("file", "", "network: start binlog file (without it: -gtid)")
	startPos := flag.Uint("pos", 4, "network: start position")
	gtid := flag.String("gtid", "", "network: start after this GTID set (MariaDB: 0-1-5,...; empty: from the start)")
	relay := flag.Bool("relay", false, "network: configure as DM's relay, not DM's syncer")
	stopFile := flag.String("stop-file", "", "stop after the event that ends at or past -stop-pos in this file")
	stopPos := flag.Uint("stop-pos", 0, "see -stop-file")
	tz := flag.String("tz", "UTC", "the task's time zone (TimestampStringLocation)")
	timeout := flag.Duration("timeout", 60*time.Second, "network: give up when the stop position is not reached by then")
	flag.Parse()

	o := &output{enc: json.NewEncoder(os.Stdout), stopFile: *stopFile, stopPos: uint32(*stopPos)}
	o.enc.SetEscapeHTML(false)
	loc, err := time.LoadLocation(*tz)
	if err != nil {
		o.fail(err)
	}
	switch *mode {
	case "file":
		err = readFiles(o, loc, *offset, flag.Args())
		if errors.Is(err, errStop) {
			err = nil
		}
	case "network":
		pw := *password
		if pw == "" {
			pw = os.Getenv("GOMYSQL_PEER_PASSWORD")
		}
		cfg := replication.BinlogSyncerConfig{
			ServerID: uint32(*serverID), Flavor: *flavor, Host: *host, Port: uint16(*port),
			User: *user, Password: pw, TimestampStringLocation: loc, Localhost: "gomysql-peer",
		}
		err = readNetwork(o, cfg, *relay, *startFile, *startPos, *gtid, *timeout)
	default:
		fmt.Fprintln(os.Stderr, "usage: gomysql-peer -mode file|network ...")
		os.Exit(2)
	}
	if err != nil {
		o.fail(err)
	}
	o.end()
}
