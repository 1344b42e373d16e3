package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/airlock-dev/airlock"
)

// conn is one side of a session, as the gateway reads and writes it: the
// client's stdio or HTTP session, or an upstream's process or HTTP session.
// An sdk.Connection is one.
type conn interface {
	Read(context.Context) (jsonrpc.Message, error)
	Write(context.Context, jsonrpc.Message) error
	Close() error
}

// malformed is a line that is not a JSON-RPC message. Reading goes on past
// it: the gateway answers it with a JSON-RPC error and carries on, where
// the SDK's stdio connection would end the session.
type malformed struct {
	id   jsonrpc.ID // the request's ID, when it could be read
	code int64      // the JSON-RPC error: a parse error, or an invalid request
	err  error
}

func (m *malformed) Error() string { return m.err.Error() }

// maxLine bounds one message on a stdio stream (the SDK's default).
const maxLine = 16 << 20

// stream is MCP's stdio transport: one JSON-RPC message per line. Reads
// come from a goroutine, so that Close unblocks a Read.
type stream struct {
	strict bool // the client's: a message JSON readers could read two ways is malformed
	items  chan streamItem
	done   chan struct{}
	w      io.Writer
	wmu    sync.Mutex
	closer func() error
	once   sync.Once
}

type streamItem struct {
	msg jsonrpc.Message
	err error
}

// newStream reads messages from r and writes them to w; close is called
// once, by Close. A strict stream (the client's) reads each message as
// unambiguous (see ambiguous).
func newStream(r io.Reader, w io.Writer, close func() error, strict bool) *stream {
	s := &stream{items: make(chan streamItem), done: make(chan struct{}), w: w, closer: close, strict: strict}
	go s.readLoop(bufio.NewReaderSize(r, 64<<10))
	return s
}

func (s *stream) readLoop(r *bufio.Reader) {
	for {
		line, err := readLine(r)
		var items []streamItem
		if errors.Is(err, errLineTooLong) {
			items, err = []streamItem{{err: &malformed{code: jsonrpc.CodeInvalidRequest, err: err}}}, nil
		} else {
			items = decodeLine(line, err, s.strict)
		}
		for _, it := range items {
			select {
			case s.items <- it:
			case <-s.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

var errLineTooLong = fmt.Errorf("a message longer than %d bytes", maxLine)

// readLine reads one line, without its newline. A line longer than maxLine
// is skipped whole and reported as errLineTooLong.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return bytes.TrimRight(line, "\r\n"), err
		}
	}
}

// decodeLine reads a line's message, or each of a batch's (MCP before
// 2025-06-18), and a read error after it.
func decodeLine(line []byte, readErr error, strict bool) []streamItem {
	var items []streamItem
	if line = bytes.TrimSpace(line); len(line) > 0 {
		if line[0] == '[' {
			var batch []json.RawMessage
			if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
				items = append(items, streamItem{err: &malformed{code: jsonrpc.CodeInvalidRequest, err: fmt.Errorf("not a JSON-RPC batch: %v", err)}})
			}
			for _, raw := range batch {
				items = append(items, decodeOne(raw, strict))
			}
		} else {
			items = append(items, decodeOne(line, strict))
		}
	}
	if readErr != nil {
		items = append(items, streamItem{err: readErr})
	}
	return items
}

func decodeOne(b []byte, strict bool) streamItem {
	msg, err := jsonrpc.DecodeMessage(b)
	if err == nil {
		if strict {
			if bad := ambiguous(b, msg); bad != nil {
				return streamItem{err: bad}
			}
		}
		return streamItem{msg: msg}
	}
	m := &malformed{code: jsonrpc.CodeParseError, err: err}
	if !json.Valid(b) {
		return streamItem{err: m}
	}
	m.code = jsonrpc.CodeInvalidRequest
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(b, &probe) == nil {
		m.id, _ = jsonrpc.MakeID(probe.ID)
	}
	return streamItem{err: m}
}

// ambiguous returns the error to answer a message of the client's with
// when JSON readers could read it two ways (airlock.CheckJSON) — its own
// members ("method" and "Method", "params" twice), or invalid UTF-8 —
// and nil when it reads one way, or when the ambiguity lies within a
// request's params alone: the session refuses those as invalid params,
// naming the member, when it handles the request.
func ambiguous(b []byte, msg jsonrpc.Message) *malformed {
	err := airlock.CheckJSON(b)
	if err == nil {
		return nil
	}
	bad := &malformed{code: jsonrpc.CodeInvalidRequest, err: fmt.Errorf("it can be read more than one way: %s", airlock.ErrorMessage(err))}
	if req, ok := msg.(*jsonrpc.Request); ok {
		if len(req.Params) > 0 && airlock.CheckJSON(req.Params) != nil {
			return nil
		}
		bad.id = req.ID
	}
	return bad
}

// Read returns the next message; a *malformed error is a line that was not
// one, and the stream goes on.
func (s *stream) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case it := <-s.items:
		return it.msg, it.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, io.EOF
	}
}

// Write writes msg on one line.
func (s *stream) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	select {
	case <-s.done:
		return io.ErrClosedPipe
	default:
	}
	_, err = s.w.Write(append(b, '\n'))
	return err
}

// Close ends the stream; a Read waiting returns.
func (s *stream) Close() error {
	var err error
	s.once.Do(func() {
		close(s.done)
		if s.closer != nil {
			err = s.closer()
		}
	})
	return err
}

// intID is a request ID of the gateway's own.
func intID(n int64) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(n))
	return id
}
