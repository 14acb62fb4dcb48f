//go:build !unix

package redisserver

import (
	"errors"
	"os"
	"syscall"
)

// errNoSignals is what Pause and Resume return where a process cannot be
// stopped and continued.
var errNoSignals = errors.New("redisserver: pausing a process needs SIGSTOP (unix only)")

func procAttr() *syscall.SysProcAttr { return nil }

func killGroup(p *os.Process) { _ = p.Kill() }

func freeze(*os.Process) error { return errNoSignals }
func thaw(*os.Process) error   { return errNoSignals }

// processAlive cannot tell without signals: every process counts as alive,
// so no directory is removed.
func processAlive(int) bool { return true }

func ownedByMe(os.FileInfo) bool { return false }
