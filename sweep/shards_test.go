package sweep

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadShards parses every file in order, and names the one that does not
// parse; a file that is not there is the file system's error.
func TestReadShards(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for p, s := range map[string]string{a: "1", b: "x"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(data []byte) (string, error) {
		if string(data) == "x" {
			return "", errors.New("not a result")
		}
		return string(data), nil
	}
	if got, err := ReadShards([]string{a, a}, read); err != nil || strings.Join(got, ",") != "1,1" {
		t.Errorf("two good shards: %v, %v", got, err)
	}
	if _, err := ReadShards([]string{a, b}, read); err == nil || err.Error() != b+": not a result" {
		t.Errorf("a bad shard: %v", err)
	}
	if _, err := ReadShards([]string{filepath.Join(dir, "none.json")}, read); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing shard: %v", err)
	}
}
