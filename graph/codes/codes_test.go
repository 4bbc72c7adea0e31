package codes

import "testing"

func TestKnown(t *testing.T) {
	for _, c := range []string{ParseFailed, ValidationFailed, PersistedQueryNotFound,
		BadUserInput, NotFound, AlreadyExists, Conflict, Unavailable, RateLimited,
		Unauthenticated, Forbidden, PersistedQueryNotInList, ResponseTooLarge, Internal} {
		if !Known(c) {
			t.Errorf("Known(%q) = false", c)
		}
	}
	for _, c := range []string{"", "COMPLEXITY_LIMIT_EXCEEDED", "bad_user_input", "INTERNAL_SERVER_ERROR"} {
		if Known(c) {
			t.Errorf("Known(%q) = true", c)
		}
	}
}
