//go:build tools

// Package tools pins tidb-server's main package in this module, so `go build
// github.com/pingcap/tidb/cmd/tidb-server` resolves it from go.mod and go.sum.
package tools

import _ "github.com/pingcap/tidb/cmd/tidb-server"
