// Who may do what. A request's credential is the service's secret, which
// allows everything, or a scoped token (package token) that allows reads
// or writes of one filter, or of the names with a prefix, until it expires;
// POST /v1/tokens makes one. It is checked in serve before anything reaches
// a Durable Object, so a refused request costs the shards nothing.

package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/token"
)

// access is what a request's credential allows: everything (the service's
// secret, EDGEBLOOM_TOKEN, or the previous one while a rotation runs), or
// what a scoped token's claims allow (package token).
type access struct {
	admin  bool
	claims token.Claims
}

// The errors of a credential that is refused. A token that fails to verify
// is 401 (the client must get another); one that is valid but does not
// allow the request is 403 (another token would).
var tokenErrors = []struct {
	err     error
	status  int
	code    string
	message string
}{
	{token.ErrMalformed, http.StatusUnauthorized, "token_malformed", "the bearer token is not a token of this service"},
	{token.ErrSignature, http.StatusUnauthorized, "token_bad_signature", "the token's signature does not match: it was changed, or made with a secret this service no longer accepts"},
	{token.ErrExpired, http.StatusUnauthorized, "token_expired", "the token has expired; get a new one"},
	{token.ErrFilter, http.StatusForbidden, "token_other_filter", "the token is for another filter"},
	{token.ErrOperation, http.StatusForbidden, "token_not_allowed", "the token does not allow this operation"},
}

// tokenError turns an error of package token into the API's error. A
// refusal's message says which filter or operation the token allows, or
// when it expired: the client holds the token, so nothing is told that it
// cannot read in it.
func tokenError(err error) error {
	for _, e := range tokenErrors {
		if !errors.Is(err, e.err) {
			continue
		}
		msg := e.message
		if detail := strings.TrimPrefix(err.Error(), e.err.Error()); detail != "" {
			msg += " (" + strings.TrimPrefix(detail, ": ") + ")"
		}
		return errorf(e.status, e.code, "%s", strings.TrimSpace(msg))
	}
	return err
}

// verifiers caches the token.Verifier of the secrets last seen, so that
// the signing keys are derived once, not at every request.
var verifiers struct {
	sync.Mutex
	current, previous string
	v                 *token.Verifier
}

func verifierFor(current, previous string) *token.Verifier {
	verifiers.Lock()
	defer verifiers.Unlock()
	if verifiers.v == nil || verifiers.current != current || verifiers.previous != previous {
		verifiers.current, verifiers.previous = current, previous
		verifiers.v = token.NewVerifier([]byte(current), []byte(previous))
	}
	return verifiers.v
}

// authenticate reads the request's bearer credential. The secrets are
// compared by their SHA-256 digests in constant time, both of them every
// time, so the time taken tells neither a token's length nor which secret
// matched; a token's signature is compared in constant time too
// (token.Verifier). No storage is read.
func (s *Server) authenticate(r *http.Request) (access, error) {
	secret, previous := "", ""
	if s.Token != nil {
		secret = s.Token()
	}
	if s.PreviousToken != nil {
		previous = s.PreviousToken()
	}
	if secret == "" {
		return access{}, errorf(http.StatusInternalServerError, "not_configured", "the service has no EDGEBLOOM_TOKEN set")
	}
	got, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return access{}, errorf(http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <EDGEBLOOM_TOKEN or a token it made>")
	}
	gotSum, wantSum, prevSum := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(secret)), sha256.Sum256([]byte(previous))
	isSecret := subtle.ConstantTimeCompare(gotSum[:], wantSum[:])
	isPrevious := subtle.ConstantTimeCompare(gotSum[:], prevSum[:]) & boolInt(previous != "")
	if isSecret|isPrevious == 1 {
		return access{admin: true}, nil
	}
	if !token.IsToken(got) {
		return access{}, errorf(http.StatusUnauthorized, "unauthorized", "send Authorization: Bearer <EDGEBLOOM_TOKEN or a token it made>")
	}
	claims, err := verifierFor(secret, previous).Verify(got, time.Now())
	if err != nil {
		return access{}, tokenError(err)
	}
	return access{claims: claims}, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// allow returns nil if a may do op on the filter name.
func (a access) allow(op token.Operation, name string) error {
	if a.admin {
		return nil
	}
	return tokenError(a.claims.Allow(op, name))
}

// adminOnly returns nil for the service's secret, and 403 for a token:
// making filters, deleting them and making tokens need the secret.
func (a access) adminOnly(what string) error {
	if a.admin {
		return nil
	}
	return errorf(http.StatusForbidden, "token_not_allowed", "the token does not allow this operation: %s needs the service's secret (EDGEBLOOM_TOKEN)", what)
}

// operation names what a request on a filter asks, for the token check.
func operation(action, method string) token.Operation {
	switch action + " " + method {
	case " GET":
		return token.Stats
	case " PUT":
		return token.Create
	case " DELETE":
		return token.Delete
	case "add POST", "merge POST":
		// A merge sets bits as an add does: a crawler's write token may.
		return token.Add
	case "check POST":
		return token.Check
	case "snapshot GET":
		return token.Snapshot
	case "changes GET":
		return token.Changes
	}
	return token.Operation(action + " " + method)
}

// tokensPath is the endpoint that makes tokens.
const tokensPath = "/v1/tokens"

const tokensShape = `{"scope": "read" | "write", "filter": string, "expiresIn": integer}`

// mintToken serves POST /v1/tokens: a token of the scope, filter and
// lifetime asked for, signed with the current secret. Only the secret may
// ask.
func (s *Server) mintToken(w http.ResponseWriter, r *http.Request, a access) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on this endpoint; allowed: POST", r.Method)
	}
	if err := a.adminOnly("making a token"); err != nil {
		return err
	}
	var req struct {
		Scope     *string  `json:"scope"`
		Filter    *string  `json:"filter"`
		ExpiresIn *jsonInt `json:"expiresIn"`
	}
	if err := readJSON(r, &req, tokensShape); err != nil {
		return err
	}
	maxSeconds := int64(token.MaxLifetime / time.Second)
	switch {
	case req.Scope == nil || (*req.Scope != string(token.Read) && *req.Scope != string(token.Write)):
		return errorf(http.StatusBadRequest, "invalid_params", `"scope" must be "read" or "write"`)
	case req.Filter == nil || token.ValidFilter(*req.Filter) != nil:
		return errorf(http.StatusBadRequest, "invalid_params", `"filter" must be a filter name (1 to %d of A-Z a-z 0-9 - _ . not starting with a dot), or such a prefix followed by "*"`, maxNameBytes)
	case req.ExpiresIn == nil || !(*req.ExpiresIn >= 1 && *req.ExpiresIn <= jsonInt(maxSeconds)):
		return errorf(http.StatusBadRequest, "invalid_params", `"expiresIn" must be an integer number of seconds from 1 to %d (366 days)`, maxSeconds)
	}
	claims := token.Claims{
		Scope:   token.Scope(*req.Scope),
		Filter:  *req.Filter,
		Expires: time.Now().Add(time.Duration(*req.ExpiresIn) * time.Second).Truncate(time.Second).UTC(),
	}
	tok, err := token.Mint([]byte(s.Token()), claims)
	if err != nil {
		return internalError(http.StatusInternalServerError, "internal", "making the token failed", err)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"token": tok, "expires": claims.Expires.Format(time.RFC3339), "scope": claims.Scope, "filter": claims.Filter,
	})
	return nil
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme. Auth schemes are case-insensitive (RFC 9110 §11.1: "bearer x" is
// Bearer too), and one or more spaces separate the scheme from the token.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimLeft(h, " "), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	return token, token != ""
}
