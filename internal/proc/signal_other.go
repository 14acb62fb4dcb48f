//go:build !unix

package proc

import (
	"os"
	"syscall"
)

// Attr is nil: no process groups here.
func Attr() *syscall.SysProcAttr { return nil }

// KillGroup kills the process itself.
func KillGroup(p *os.Process) { _ = p.Kill() }

// Freeze cannot stop a process here.
func Freeze(*os.Process) error { return ErrNoSignals }

// Thaw cannot continue a process here.
func Thaw(*os.Process) error { return ErrNoSignals }

// Alive cannot tell without signals: every process counts as alive, so
// nothing is cleaned up on its account.
func Alive(int) bool { return true }

// OwnedByMe cannot tell here: nothing is.
func OwnedByMe(os.FileInfo) bool { return false }
