package approval

import text "github.com/airlockhq/airlock/internal/visible"

// visible returns s as the prompt shows it, and whether it had to be
// escaped: every line airlock prints shares one rule (internal/visible).
func visible(s string) (string, bool) { return text.Escape(s) }
