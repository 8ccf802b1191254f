//go:build !gomysql_v1_7

package main

import (
	"log/slog"
	"os"

	"github.com/go-mysql-org/go-mysql/replication"
)

// setLogger: go-mysql logs through log/slog (slog.Default, stdout's neighbour stderr here).
func setLogger(cfg *replication.BinlogSyncerConfig) {
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
}
