package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"path/filepath"
)

// fileLink is a file a report links: its name as shown, and its path
// relative to the report's directory (slash-separated, as a URL).
type fileLink struct {
	Name, Href string
}

// agentLogLinks links the agents' logs of a process-backend run from a
// report written in dir: each log's path relative to dir where it has
// one, else as the run kept it.
func agentLogLinks(dir string, a *verdict.RunAgent) []fileLink {
	if a == nil {
		return nil
	}
	var out []fileLink
	for _, p := range a.Logs {
		href := p
		if absDir, err := filepath.Abs(dir); err == nil {
			if absLog, err := filepath.Abs(p); err == nil {
				if rel, err := filepath.Rel(absDir, absLog); err == nil {
					href = rel
				}
			}
		}
		out = append(out, fileLink{Name: filepath.Base(p), Href: filepath.ToSlash(href)})
	}
	return out
}
