package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/provider/coreapi/gen/api"
	"github.com/provider/coreapi/internal/core"
)

// CreateOAuthToken implements POST /v1/oauth/token (client credentials, RFC 6749 §4.4).
func (s *Server) CreateOAuthToken(ctx context.Context, req api.CreateOAuthTokenRequestObject) (api.CreateOAuthTokenResponseObject, error) {
	var in core.TokenRequest
	switch {
	case req.JSONBody != nil:
		in = core.TokenRequest{ClientID: req.JSONBody.ClientId, ClientSecret: req.JSONBody.ClientSecret, Scope: req.JSONBody.Scope}
	case req.FormdataBody != nil:
		in = core.TokenRequest{ClientID: deref(req.FormdataBody.ClientId), ClientSecret: deref(req.FormdataBody.ClientSecret), Scope: req.FormdataBody.Scope}
	default:
		return nil, core.Errorf(core.EInvalidRequest, "A token request body is required.")
	}
	usedBasic := false
	if id, secret, ok := basicAuth(requestHeader(ctx)); ok {
		if in.ClientID != "" || in.ClientSecret != "" {
			return nil, core.Errorf(core.EInvalidRequest, "Authenticate the client either with HTTP Basic or in the body, not both.")
		}
		in.ClientID, in.ClientSecret, usedBasic = id, secret, true
	}
	if in.ClientID == "" || in.ClientSecret == "" {
		return nil, core.Errorf(core.EInvalidClient, "Client authentication is required: client_id and client_secret, or HTTP Basic.")
	}
	// The key's rules on where it may be used from hold for its tokens: refused here, not
	// only when the token is used.
	header := requestHeader(ctx)
	in.Admit = func(rs *core.Restrictions) error {
		return admit(rs, s.cfg.ProductionTrafficEnabled, remoteAddr(ctx), header.Get("Origin"))
	}
	token, err := s.cfg.Services.Credentials.IssueToken(ctx, in)
	if err != nil {
		if usedBasic && core.ErrorCode(err) == core.EInvalidClient {
			err = &headerError{error: err, header: http.Header{"Www-Authenticate": {`Basic realm="provider-core-api"`}}}
		}
		return nil, err
	}
	return noStoreToken{api.CreateOAuthToken200JSONResponse{Body: api.OAuthTokenResponse{
		AccessToken: token.Token,
		TokenType:   api.OAuthTokenTypeBearer,
		ExpiresIn:   token.ExpiresIn.Seconds(),
		Scope:       strings.Join(token.Scopes, " "),
	}}}, nil
}

// noStoreToken adds the caching headers RFC 6749 §5.1 requires on token responses.
type noStoreToken struct {
	api.CreateOAuthToken200JSONResponse
}

func (r noStoreToken) VisitCreateOAuthTokenResponse(w http.ResponseWriter) error {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	return r.CreateOAuthToken200JSONResponse.VisitCreateOAuthTokenResponse(w)
}

// basicAuth reads HTTP Basic client credentials (RFC 6749 §2.3.1: both parts form-encoded).
func basicAuth(h http.Header) (id, secret string, ok bool) {
	r := http.Request{Header: h}
	id, secret, ok = r.BasicAuth()
	return id, secret, ok
}
