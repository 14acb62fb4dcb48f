//go:build !unix

package rediscluster

import (
	"errors"
	"os"
	"syscall"
)

var errNoSignals = errors.New("rediscluster: pausing a process needs SIGSTOP (unix only)")

func procAttr() *syscall.SysProcAttr { return nil }
func killGroup(p *os.Process)        { _ = p.Kill() }
func freeze(*os.Process) error       { return errNoSignals }
func thaw(*os.Process) error         { return errNoSignals }
func alive(int) bool                 { return false }
