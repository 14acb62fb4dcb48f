package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/leaselab/leaselab/model"
)

// ExistsError is WriteFiles refusing to overwrite a scenario file.
type ExistsError struct{ Path string }

// Error names the file that exists.
func (e *ExistsError) Error() string { return e.Path + " exists" }

// WriteFiles writes each scenario of suite to dir/<name>.yaml (Marshal),
// creating dir, and only once every file is known to read back (Parse)
// and, unless force, not to exist: otherwise nothing is written. A file
// that would not read back is the *Error of Parse, wrapped; one that
// exists an *ExistsError; the file system's errors are its own
// (*fs.PathError). notes, by scenario name, are written as comment lines
// at the top of their files (how a fault's phase was found, say).
func WriteFiles(dir string, suite []model.Scenario, notes map[string]string, force bool) error {
	files := make(map[string][]byte, len(suite))
	for _, sc := range suite {
		b, err := Marshal(sc)
		if err != nil {
			return fmt.Errorf("writing %s: %w", sc.Name, err)
		}
		if n := notes[sc.Name]; n != "" {
			b = append([]byte(commentLines(n)), b...)
		}
		path := filepath.Join(dir, sc.Name+".yaml")
		// What is written must read back: a limit the parser refuses (a
		// typo in an expression) is the caller's error, with file:line.
		if _, err := Parse(path, b); err != nil {
			return fmt.Errorf("the suite would not be valid, nothing written: %w", err)
		}
		if _, err := os.Stat(path); err == nil && !force {
			return &ExistsError{path}
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		files[path] = b
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, sc := range suite {
		path := filepath.Join(dir, sc.Name+".yaml")
		if err := os.WriteFile(path, files[path], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// commentLines is text as YAML comment lines of at most about 100
// columns.
func commentLines(text string) string {
	var b strings.Builder
	line := "#"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 100 && line != "#" {
			b.WriteString(line + "\n")
			line = "#"
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
	return b.String()
}
