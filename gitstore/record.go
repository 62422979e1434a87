package gitstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/nwdes/nwdes/gitstore/oid"
	"github.com/nwdes/nwdes/refusal"
)

// Kind names what a record holds, such as "examine.draft". Each package that
// stores records declares its kinds, with their current versions, checks and
// merge rules, in a Registry.
type Kind string

// Record is one typed document: canonical JSON plus optional byte payloads
// kept exactly as given (observation text, command output).
//
// On disk a record at path P is the tree P/ holding record.json, the
// canonical envelope {"body":…,"kind":…,"v":…}, P/payload/<name> blobs,
// and, for a record that carries one, P/tree: a tree of files already in
// the object store (see Tree).
type Record struct {
	Kind Kind
	// V is the record's format version; see the kind's declaring package for
	// the history of each version.
	V        int
	Body     json.RawMessage
	Payloads map[string][]byte
	// Tree, given to Put, is a tree the record carries by reference: files
	// whose blobs are already in the object store (a commit's files, say),
	// kept under P/tree so that they stay reachable and travel with the
	// record, without being read or copied. Get leaves it nil and sets
	// TreeID, the id of P/tree (zero when the record carries none), which
	// is TreeOf(Tree) for the files given.
	Tree   []TreeFile
	TreeID oid.ID

	// read is set on a record the store read: what it keeps of the
	// record.json, shared by every Record read from that blob.
	read *envelope
}

// TreeFile is one file of a tree a record carries: a slash-separated path,
// ModeFile or ModeExec, and the id of a blob already in the store.
type TreeFile struct {
	Path string
	Mode uint32
	Blob oid.ID
}

// JSON is the record's canonical record.json: what a signature of the
// record covers, with its payloads (see package trust).
func (r *Record) JSON() ([]byte, error) { return r.encode() }

// NewRecord encodes body canonically into a record of the given kind.
func NewRecord(kind Kind, v int, body any) (*Record, error) {
	b, err := Canonical(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s record: %w", kind, err)
	}
	return &Record{Kind: kind, V: v, Body: b}, nil
}

// Decode unmarshals the body into v, refusing fields v does not declare:
// a record written by a newer nwdes is refused, not half-read.
//
// encoding/json matches field names without regard to case, so the decoded
// value must also encode back to exactly the stored body: "Feature" for
// "feature" is refused rather than read as if it were right.
func (r *Record) Decode(v any) error {
	bad := func(format string, args ...any) error {
		return refusal.NewUnreadable(refusal.RecordMalformed,
			"run git nwdes fsck; a record written by a newer nwdes needs that version",
			"%s record v%d %s", r.Kind, r.V, fmt.Sprintf(format, args...))
	}
	// What a zero value of one type reads from one body is always the
	// same: once it read back as written, it always does. That holds for
	// the record kinds' body types, which encoding/json decodes and
	// encodes by their fields; a type with its own UnmarshalJSON or
	// MarshalJSON must be deterministic for it to hold.
	var typ reflect.Type
	if rv := reflect.ValueOf(v); r.read != nil && rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().IsZero() &&
		bytes.Equal(r.Body, r.read.Body) {
		typ = rv.Type()
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bad("does not decode: %v", err)
	}
	if typ != nil {
		if _, ok := r.read.readsBack.Load(typ); ok {
			return nil
		}
	}
	if again, err := Canonical(v); err != nil || !bytes.Equal(again, r.Body) {
		return bad("does not read back as written (a field misspelt, in another case, or not in this version)")
	}
	if typ != nil {
		r.read.readsBack.Store(typ, true)
	}
	return nil
}

type envelope struct {
	Body json.RawMessage `json:"body"`
	Kind Kind            `json:"kind"`
	V    int             `json:"v"`
	// readsBack holds the types (reflect.Type) whose zero value Decode
	// filled from Body and found to read back as written: a second Decode
	// of the same body into a zero value of the same type has nothing new
	// to check. Set on the envelopes the store keeps.
	readsBack *sync.Map
}

// envelopeOf is r's envelope, with a body of its own: what the store
// keeps of a record it decoded. r shares it from now on.
func envelopeOf(r *Record) *envelope {
	e := &envelope{Body: bytes.Clone(r.Body), Kind: r.Kind, V: r.V, readsBack: &sync.Map{}}
	r.read = e
	return e
}

// record is a fresh Record of the envelope, its body the caller's own.
func (e *envelope) record() *Record {
	return &Record{Kind: e.Kind, V: e.V, Body: bytes.Clone(e.Body), read: e}
}

func (r *Record) encode() ([]byte, error) {
	if r.Kind == "" || r.V < 1 {
		return nil, fmt.Errorf("record needs a kind and a version >= 1 (have %q v%d)", r.Kind, r.V)
	}
	return Canonical(envelope{Body: r.Body, Kind: r.Kind, V: r.V})
}

// size is what the record limit counts: the envelope and every payload.
func (r *Record) size(enc []byte) int {
	n := len(enc)
	for _, p := range r.Payloads {
		n += len(p)
	}
	return n
}

func decodeRecord(b []byte) (*Record, error) {
	if err := CheckCanonical(b); err != nil {
		return nil, err
	}
	var env envelope
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(&env)
	r := &Record{Kind: env.Kind, V: env.V, Body: env.Body}
	if err == nil && (env.Kind == "" || env.V < 1 || len(env.Body) == 0) {
		err = fmt.Errorf("empty field")
	}
	if err == nil && !bytes.Equal(canonicalEnvelope(r), b) {
		// Field names must be exactly body, kind and v (encoding/json
		// would also take "Body" or "KIND").
		err = fmt.Errorf("field names differ")
	}
	if err != nil {
		return nil, refusal.NewUnreadable(refusal.RecordMalformed,
			"run git nwdes fsck to find the damaged record",
			"record envelope is not {body, kind, v}")
	}
	return r, nil
}

// canonicalEnvelope is what encode returns for r when r.Body is already
// canonical, as a body read from a canonical record is: the envelope is
// written around it rather than the whole record encoded and re-read a
// second time at every read.
func canonicalEnvelope(r *Record) []byte {
	var out bytes.Buffer
	out.Grow(len(r.Body) + len(r.Kind) + 32)
	out.WriteString(`{"body":`)
	out.Write(r.Body)
	out.WriteString(`,"kind":`)
	writeString(&out, string(r.Kind))
	out.WriteString(`,"v":`)
	out.WriteString(strconv.Itoa(r.V))
	out.WriteByte('}')
	return out.Bytes()
}

// maxPayloadName bounds a payload file's name, in bytes (names.Valid).
const maxPayloadName = 100

// Canonical encodes v as canonical JSON: object keys sorted, no
// insignificant whitespace, no HTML escaping, UTF-8 only, numbers kept as
// written. Equal values always give equal bytes, so records hash stably.
func Canonical(v any) ([]byte, error) {
	var raw []byte
	switch t := v.(type) {
	case json.RawMessage:
		raw = t
	case []byte:
		raw = t
	default:
		// encoding/json would replace invalid UTF-8 with U+FFFD, so the
		// record would not say what was given: refuse it first.
		if where, ok := invalidUTF8(reflect.ValueOf(v), ""); ok {
			return nil, refusal.New(refusal.InputNotUTF8, "give text as UTF-8",
				"%s holds bytes that are not UTF-8; a record keeps text exactly or not at all", where)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		raw = buf.Bytes()
	}
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("json is not valid UTF-8")
	}
	if out, ok := appendCanonical(make([]byte, 0, len(raw)), raw); ok {
		return out, nil
	}
	return canonicalByTokens(raw)
}

// canonicalByTokens is Canonical of raw (valid UTF-8) read as
// encoding/json's tokens: the authority the fast path (canonical.go)
// leaves what it does not take to, and which names every error.
func canonicalByTokens(raw []byte) ([]byte, error) {
	var out bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := writeCanonical(&out, dec); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("json has trailing data")
	}
	return out.Bytes(), nil
}

// CheckCanonical refuses bytes that are not exactly their canonical form.
func CheckCanonical(b []byte) error {
	c, err := Canonical(b)
	if err != nil || !bytes.Equal(c, b) {
		why := "not in canonical form (sorted keys, no whitespace)"
		if err != nil {
			why = err.Error()
		}
		return refusal.NewUnreadable(refusal.RecordMalformed,
			"run git nwdes fsck to find the damaged record",
			"record json is %s", why)
	}
	return nil
}

// writeCanonical re-emits one JSON value from a token stream, sorting object
// keys and refusing duplicate keys (which encoding/json would silently merge).
func writeCanonical(out *bytes.Buffer, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("json: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			type kv struct {
				k string
				v []byte
			}
			var kvs []kv
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("json: %w", err)
				}
				k := kt.(string)
				if seen[k] {
					return fmt.Errorf("json object has duplicate key %q", k)
				}
				seen[k] = true
				var vb bytes.Buffer
				if err := writeCanonical(&vb, dec); err != nil {
					return err
				}
				kvs = append(kvs, kv{k, vb.Bytes()})
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("json: %w", err)
			}
			sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
			out.WriteByte('{')
			for i, e := range kvs {
				if i > 0 {
					out.WriteByte(',')
				}
				writeString(out, e.k)
				out.WriteByte(':')
				out.Write(e.v)
			}
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			first := true
			for dec.More() {
				if !first {
					out.WriteByte(',')
				}
				first = false
				if err := writeCanonical(out, dec); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("json: %w", err)
			}
			out.WriteByte(']')
		default:
			return fmt.Errorf("json: unexpected %v", t)
		}
	case string:
		writeString(out, t)
	case json.Number:
		out.WriteString(t.String())
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	}
	return nil
}

func writeString(out *bytes.Buffer, s string) {
	out.Write(appendString(out.AvailableBuffer(), s))
}

// invalidUTF8 finds a string in v (fields, elements, map keys and values)
// that is not valid UTF-8, and says where.
func invalidUTF8(v reflect.Value, where string) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return where, true
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return invalidUTF8(v.Elem(), where)
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			name := strings.Split(f.Tag.Get("json"), ",")[0]
			if name == "" {
				name = f.Name
			}
			if w, ok := invalidUTF8(v.Field(i), strings.TrimPrefix(where+"."+name, ".")); ok {
				return w, true
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			return "", false // []byte is base64 in JSON: any bytes survive
		}
		for i := 0; i < v.Len(); i++ {
			if w, ok := invalidUTF8(v.Index(i), fmt.Sprintf("%s[%d]", where, i)); ok {
				return w, true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if w, ok := invalidUTF8(it.Key(), where+"{key}"); ok {
				return w, true
			}
			if w, ok := invalidUTF8(it.Value(), fmt.Sprintf("%s[%v]", where, it.Key())); ok {
				return w, true
			}
		}
	}
	return "", false
}
