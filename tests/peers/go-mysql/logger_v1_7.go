//go:build gomysql_v1_7

package main

import (
	"os"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/siddontang/go-log/log"
)

// setLogger: go-mysql v1.7 logs to stdout by default, through the syncer's logger
// (NewBinlogSyncer) and go-log's default one (binlogstreamer.go); keep stdout for rows.
func setLogger(cfg *replication.BinlogSyncerConfig) {
	handler, _ := log.NewStreamHandler(os.Stderr)
	cfg.Logger = log.NewDefault(handler)
	log.SetDefaultLogger(log.NewDefault(handler))
}
