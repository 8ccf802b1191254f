//go:build tools

// Package dm pins DM's programs (pingcap/tiflow cmd/dm-master, cmd/dm-worker, cmd/dm-ctl) so
// that `go mod tidy` keeps every module they need in go.mod and go.sum; tests/peers/build.py
// builds them from this module.
package dm

import (
	_ "github.com/pingcap/tiflow/cmd/dm-ctl"
	_ "github.com/pingcap/tiflow/cmd/dm-master"
	_ "github.com/pingcap/tiflow/cmd/dm-worker"
)
