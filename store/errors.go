package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/region"
)

// ErrCorrupt marks stored cells that do not decode: damage or a bug, never
// the caller's input. An error wrapping it names the row key and what was
// wrong; the server logs it and tells the client only INTERNAL.
var ErrCorrupt = errors.New("store: corrupt row")

// rowKey is a row key as the store holds one: bytes, or a string (a Row's,
// which a decoder should not copy into bytes unless the row is corrupt).
type rowKey interface{ ~string | ~[]byte }

// corrupt is ErrCorrupt for the row with key row, saying what was wrong.
func corrupt[K rowKey](row K, format string, args ...any) error {
	return fmt.Errorf("%w %x: %s", ErrCorrupt, row, fmt.Sprintf(format, args...))
}

// Refusal is an error of the caller's making whose Reason a client may
// read: what was wrong, in our words, naming the argument at fault. A
// Reason never quotes a value the client sent (an id, a name, a string),
// a row key, a Go type or another library's error: the server's error
// presenter sends it as the message, and words every error that is not a
// Refusal itself. Kind is the sentinel it wraps (ErrInvalidInput,
// ErrConflict, ...), which chooses the code.
type Refusal struct {
	Kind   error
	Reason string
}

func (e *Refusal) Error() string { return e.Kind.Error() + ": " + e.Reason }
func (e *Refusal) Unwrap() error { return e.Kind }

// invalid is ErrInvalidInput with a Reason; the format's arguments must be
// ours (limits, counts), never the caller's values.
func invalid(format string, args ...any) error {
	return &Refusal{Kind: ErrInvalidInput, Reason: fmt.Sprintf(format, args...)}
}

// classify wraps an error from gohbase with ErrUnavailable when it says
// HBase could not be reached in time; anything else is returned as it is (a
// bug, to be reported as internal).
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	var retryable region.RetryableError
	var serverErr region.ServerError
	var notServing region.NotServingRegionError
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: %w", op, err)
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, gohbase.ErrClientClosed),
		errors.Is(err, gohbase.ErrCannotFindRegion),
		errors.Is(err, gohbase.TableNotFound),
		errors.As(err, &retryable), errors.As(err, &serverErr), errors.As(err, &notServing):
		return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
