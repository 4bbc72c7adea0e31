package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/region"
)

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
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
