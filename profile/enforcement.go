package profile

// RuleEnforcement says how the sandbox enforces one deny rule of the
// workspace it runs for (package workspace compiles them): by which
// kernel or egress mechanism, or only by the gate and why. A Spec carries
// the list so that the Report can show it and the fingerprint covers it:
// two runs whose rules compile differently are different profiles.
type RuleEnforcement struct {
	// Rule is the rule as written, with its effect ("deny Read(./.env)").
	Rule string `json:"rule"`
	// Source is where the rule came from ("file:line", or its layer).
	Source string `json:"source,omitempty"`
	// Kernel is set when the sandbox enforces the rule itself, whatever
	// program the command runs.
	Kernel bool `json:"kernel"`
	// Mechanism names what enforces it ("mount mask (filesystem.deny
	// /ws/.env)"); empty when only the gate does.
	Mechanism string `json:"mechanism,omitempty"`
	// Note says what the kernel does not cover, or why the rule is left
	// to the gate.
	Note string `json:"note,omitempty"`
}
