package sweep

import (
	"encoding/json"
	"time"
)

// A limit that is not set (NoLimit) is written to advice.json as null,
// never as the sentinel's nanoseconds (9223372036854775807), and read back
// as NoLimit; an absent field still reads as 0, as it always has, and a
// file written before keeps its meaning.

// limitJSON is d as advice.json writes a limit: null for NoLimit.
func limitJSON(d time.Duration) json.RawMessage {
	if d == NoLimit {
		return json.RawMessage("null")
	}
	b, _ := json.Marshal(int64(d))
	return b
}

// limitFrom reads what limitJSON wrote into d: null is NoLimit, absent
// leaves d as it is.
func limitFrom(raw json.RawMessage, d *time.Duration) error {
	switch string(raw) {
	case "":
		return nil
	case "null":
		*d = NoLimit
		return nil
	}
	return json.Unmarshal(raw, d)
}

// MarshalJSON writes MaxOverlap and MaxStale as limitJSON does.
func (c Constraints) MarshalJSON() ([]byte, error) {
	type plain Constraints
	return json.Marshal(struct {
		plain
		MaxOverlap json.RawMessage `json:"max_overlap"`
		MaxStale   json.RawMessage `json:"max_stale"`
	}{plain(c), limitJSON(c.MaxOverlap), limitJSON(c.MaxStale)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Constraints) UnmarshalJSON(b []byte) error {
	type plain Constraints
	aux := struct {
		*plain
		MaxOverlap json.RawMessage `json:"max_overlap"`
		MaxStale   json.RawMessage `json:"max_stale"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if err := limitFrom(aux.MaxOverlap, &c.MaxOverlap); err != nil {
		return err
	}
	return limitFrom(aux.MaxStale, &c.MaxStale)
}

// MarshalJSON writes Limit and Headroom as limitJSON does.
func (m Margin) MarshalJSON() ([]byte, error) {
	type plain Margin
	return json.Marshal(struct {
		plain
		Limit    json.RawMessage `json:"limit"`
		Headroom json.RawMessage `json:"headroom"`
	}{plain(m), limitJSON(m.Limit), limitJSON(m.Headroom)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *Margin) UnmarshalJSON(b []byte) error {
	type plain Margin
	aux := struct {
		*plain
		Limit    json.RawMessage `json:"limit"`
		Headroom json.RawMessage `json:"headroom"`
	}{plain: (*plain)(m)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	if err := limitFrom(aux.Limit, &m.Limit); err != nil {
		return err
	}
	return limitFrom(aux.Headroom, &m.Headroom)
}
