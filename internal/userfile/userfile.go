// Package userfile opens the files a user names to the CLI (scenario and
// sweep files, advice.json, result.json, recordings) so that a wrong path
// fails at once with an error saying what it is: only a regular file is
// read. A device (/dev/zero would be read forever), a FIFO (opening one
// without a writer blocks forever), a socket or a directory is refused by
// name, before a byte is read and without blocking; and Read stops at a
// size limit, so a file far larger than its kind ever is cannot fill the
// memory.
package userfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError is a path that is not a regular file (after symbolic
// links are followed).
type NotRegularError struct {
	Path string
	// Kind says what it is: "a directory", "a FIFO (named pipe)", "a
	// socket", "a character device", "a block device", "an irregular file".
	Kind string
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: %s, not a regular file", e.Path, e.Kind)
}

// TooLargeError is a file larger than the limit Read was given.
type TooLargeError struct {
	Path string
	// Limit is the most Read takes, in bytes.
	Limit int64
	// What names the kind of file, as Read was told ("a scenario file").
	What string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the most %s may hold", e.Path, Size(e.Limit), e.What)
}

// Size is n bytes as the messages write it: "1 MiB", "64 KiB", "100 B".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}

// kind names what a file mode is, for NotRegularError.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}

// Open opens the regular file at path for reading. Anything else is a
// *NotRegularError, found without blocking: the path is checked before it
// is opened (opening a device can act, opening a FIFO can block), opened
// non-blocking, and the opened file checked again, so a path swapped for a
// FIFO or a device in between is refused too. The file's size is not
// limited: Read limits it.
func Open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &NotRegularError{Path: path, Kind: kind(fi.Mode())}
	}
	// O_NONBLOCK: opening a FIFO swapped in after the check returns at
	// once instead of waiting for a writer (it changes nothing for a
	// regular file); O_NOCTTY: a terminal swapped in is not made this
	// process's controlling terminal.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Kind: kind(fi.Mode())}
	}
	return f, nil
}

// Read reads the regular file at path (Open), at most limit bytes: a
// larger file is a *TooLargeError naming the limit and what, the kind of
// file ("a scenario file"), and no more than limit+1 bytes are read. A
// limit of 0 means none (a recording, a result.json, which grow with
// what they record).
func Read(path string, limit int64, what string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if limit <= 0 {
		return io.ReadAll(f)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > limit {
		return nil, &TooLargeError{Path: path, Limit: limit, What: what}
	}
	// The size said is not trusted: the file may grow while it is read.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit, What: what}
	}
	return data, nil
}
