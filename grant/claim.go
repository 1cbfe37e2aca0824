package grant

// Claim is a token with the requirement it was issued for, as the gate
// hands it over and the executor presents it for redemption. The Kind
// and Target are not trusted: Redeem checks them against the token's MAC.
type Claim struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Token  Token  `json:"token"`
}
