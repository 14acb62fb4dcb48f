package process

import (
	"fmt"
	"os"
	"sync"
)

// cappedLog is an agent's stderr on disk, capped: the first half of its
// cap is written as it comes; past it, the last half is kept in memory and
// written at Close after a line saying how many bytes were cut between.
type cappedLog struct {
	mu      sync.Mutex
	f       *os.File
	head    int64 // bytes the head keeps
	written int64
	tail    []byte // a ring of the last tailCap bytes, once past the head
	tailCap int
	next    int   // where the ring writes next
	full    bool  // the ring has wrapped
	cut     int64 // bytes neither in the head nor in the ring
}

func newCappedLog(f *os.File, max int64) *cappedLog {
	return &cappedLog{f: f, head: max / 2, tailCap: int(max - max/2)}
}

func (l *cappedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(p)
	if room := l.head - l.written; room > 0 {
		k := min(int64(len(p)), room)
		if _, err := l.f.Write(p[:k]); err != nil {
			return 0, err
		}
		l.written += k
		p = p[k:]
	}
	if len(p) > 0 && l.tail == nil {
		l.tail = make([]byte, 0, l.tailCap) // only for a log past its head
	}
	for len(p) > 0 {
		if len(l.tail) < cap(l.tail) {
			k := min(len(p), cap(l.tail)-len(l.tail))
			l.tail = append(l.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if cap(l.tail) == 0 {
			l.cut += int64(len(p))
			break
		}
		// Overwrite the oldest bytes of the ring.
		k := min(len(p), cap(l.tail)-l.next)
		l.cut += int64(k)
		copy(l.tail[l.next:], p[:k])
		l.next = (l.next + k) % cap(l.tail)
		l.full = true
		p = p[k:]
	}
	return n, nil
}

// Close writes the kept tail, after a line saying what was cut, and
// closes the file.
func (l *cappedLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut > 0 {
		_, _ = fmt.Fprintf(l.f, "\n[leaselab: %d bytes of this log cut here; it keeps the first %d and the last %d bytes (process.Backend.MaxLogBytes)]\n", l.cut, l.written, len(l.tail))
	}
	if l.full {
		_, _ = l.f.Write(l.tail[l.next:])
		_, _ = l.f.Write(l.tail[:l.next])
	} else {
		_, _ = l.f.Write(l.tail)
	}
	return l.f.Close()
}
