package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// terminalSize returns the size of the terminal w is, or nil when w is not
// a terminal (or TERM=dumb): then the live view (live.Options.Size) prints
// plain lines.
func terminalSize(w io.Writer) func() (int, int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	fd := int(f.Fd())
	return func() (int, int) {
		w, h, err := term.GetSize(fd)
		if err != nil || w <= 0 || h <= 0 {
			return 80, 24
		}
		return w, h
	}
}
