package core_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/provider/coreapi/internal/core"
)

func TestCheckKeyAuthority(t *testing.T) {
	t.Parallel()
	key := func(environment string, scopes ...string) *core.Principal {
		set := map[string]bool{}
		for _, s := range scopes {
			set[s] = true
		}
		return &core.Principal{Kind: core.PrincipalOrganization, Scopes: set, Restrictions: &core.Restrictions{Environment: environment}}
	}
	operator := &core.Principal{Kind: core.PrincipalOperator}
	development := &core.Principal{Kind: core.PrincipalOrganization, Scopes: map[string]bool{"api-keys:write": true, "usage:read": true}}
	cases := []struct {
		name        string
		p           *core.Principal
		environment string
		scopes      []string
		want        string // error code; "" passes
	}{
		{"SameScopes", key("sandbox", "api-keys:write", "usage:read"), "sandbox", []string{"api-keys:write", "usage:read"}, ""},
		{"FewerScopes", key("sandbox", "api-keys:write", "usage:read"), "sandbox", []string{"usage:read"}, ""},
		{"ErrScopeNotHeld", key("sandbox", "api-keys:write"), "sandbox", []string{"api-keys:write", "usage:read"}, core.EInsufficientScope},
		{"ErrSandboxOnProduction", key("sandbox", "api-keys:write", "usage:read"), "production", []string{"usage:read"}, core.EForbidden},
		{"ProductionOnSandbox", key("production", "usage:read"), "sandbox", []string{"usage:read"}, ""},
		{"ProductionOnProduction", key("production", "usage:read"), "production", []string{"usage:read"}, ""},
		{"OperatorAnything", operator, "production", []string{"organizations:write"}, ""},
		{"UnrestrictedOnProduction", development, "production", []string{"usage:read"}, ""},
		{"ErrUnrestrictedScopeNotHeld", development, "sandbox", []string{"organizations:write"}, core.EInsufficientScope},
	}
	for _, tc := range cases {
		for _, action := range []string{"create", "rotate", "revoke"} {
			err := core.CheckKeyAuthority(tc.p, action, tc.environment, tc.scopes)
			got := ""
			if err != nil {
				got = core.ErrorCode(err)
			}
			if got != tc.want {
				t.Errorf("%s %s: %v, want code %q", tc.name, action, err, tc.want)
			}
		}
	}
}

func TestAPIKeyCreate_Validate(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Hour)
	strict, unheard := "strict", "relaxed"
	type field struct{ pointer, code string }
	cases := []struct {
		name string
		in   core.APIKeyCreate
		want []field // nil: valid
	}{
		{"Nothing", core.APIKeyCreate{}, nil},
		{"Everything", core.APIKeyCreate{
			AllowedIPs:      []string{"203.0.113.7", "203.0.113.0/24", "2001:db8::/32"},
			AllowedOrigins:  []string{"https://app.example.com", "http://localhost:3000"},
			RateLimitPolicy: &strict, ExpiresAt: &future,
		}, nil},
		{"ErrAddress", core.APIKeyCreate{AllowedIPs: []string{"203.0.113.7", "example.com"}},
			[]field{{"/allowed_ips/1", "format"}}},
		{"ErrRange", core.APIKeyCreate{AllowedIPs: []string{"203.0.113.0/40"}},
			[]field{{"/allowed_ips/0", "format"}}},
		{"ErrOriginWithPath", core.APIKeyCreate{AllowedOrigins: []string{"https://app.example.com/login"}},
			[]field{{"/allowed_origins/0", "format"}}},
		{"ErrOriginScheme", core.APIKeyCreate{AllowedOrigins: []string{"ftp://app.example.com"}},
			[]field{{"/allowed_origins/0", "format"}}},
		{"ErrOriginNoHost", core.APIKeyCreate{AllowedOrigins: []string{"https://"}},
			[]field{{"/allowed_origins/0", "format"}}},
		{"ErrOriginQuery", core.APIKeyCreate{AllowedOrigins: []string{"https://app.example.com?x=1"}},
			[]field{{"/allowed_origins/0", "format"}}},
		{"ErrOriginUser", core.APIKeyCreate{AllowedOrigins: []string{"https://me@app.example.com"}},
			[]field{{"/allowed_origins/0", "format"}}},
		{"ErrPolicy", core.APIKeyCreate{RateLimitPolicy: &unheard},
			[]field{{"/rate_limit_policy", "enum"}}},
		{"ErrExpiryPast", core.APIKeyCreate{ExpiresAt: &past}, []field{{"/expires_at", "minimum"}}},
		{"ErrExpiryNow", core.APIKeyCreate{ExpiresAt: &now}, []field{{"/expires_at", "minimum"}}},
		{"ErrSeveral", core.APIKeyCreate{AllowedIPs: []string{"x"}, AllowedOrigins: []string{"y"}, RateLimitPolicy: &unheard, ExpiresAt: &past},
			[]field{{"/allowed_ips/0", "format"}, {"/allowed_origins/0", "format"}, {"/rate_limit_policy", "enum"}, {"/expires_at", "minimum"}}},
	}
	for _, tc := range cases {
		err := tc.in.Validate(now)
		if tc.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want valid", tc.name, err)
			}
			continue
		}
		var e *core.Error
		if !errors.As(err, &e) || e.Code != core.EValidation || len(e.Fields) != len(tc.want) {
			t.Errorf("%s: %#v, want %d field errors", tc.name, err, len(tc.want))
			continue
		}
		for i, f := range tc.want {
			got := e.Fields[i]
			if got.Location != "body" || got.Pointer != f.pointer || got.Code != f.code || got.Message == "" {
				t.Errorf("%s: field %d = %+v, want %s %s", tc.name, i, got, f.pointer, f.code)
			}
		}
		if len(tc.want) == 1 && e.Message != e.Fields[0].Message {
			t.Errorf("%s: message %q, want the field's", tc.name, e.Message)
		}
		if len(tc.want) > 1 && !strings.Contains(e.Message, fmt.Sprintf("%d invalid fields", len(tc.want))) {
			t.Errorf("%s: message %q, want the count", tc.name, e.Message)
		}
	}
}

func TestAPIKey_CheckUsable(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	active, suspended := core.BusinessActive, "suspended"
	cases := []struct {
		name     string
		key      core.APIKey
		business *string
		want     string
	}{
		{"Active", core.APIKey{}, nil, ""},
		{"ExpiresLater", core.APIKey{ExpiresAt: &future}, nil, ""},
		{"ErrRevoked", core.APIKey{RevokedAt: &past}, nil, core.EUnauthenticated},
		{"ErrExpired", core.APIKey{ExpiresAt: &past}, nil, core.EUnauthenticated},
		{"ErrExpiresNow", core.APIKey{ExpiresAt: &now}, nil, core.EUnauthenticated},
		{"ActiveBusiness", core.APIKey{}, &active, ""},
		{"ErrSuspendedBusiness", core.APIKey{}, &suspended, core.EUnauthenticated},
	}
	for _, tc := range cases {
		err := tc.key.CheckUsable(now, tc.business)
		if got := codeOf(err); got != tc.want {
			t.Errorf("%s: %v, want code %q", tc.name, err, tc.want)
		}
	}
	revokedAndExpired := core.APIKey{RevokedAt: &past, ExpiresAt: &past}
	if err := revokedAndExpired.CheckUsable(now, nil); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("revoked and expired: %v, want revoked to win", err)
	}
}

func TestAPIKey_CheckRotatable(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Hour)
	replacement := uuid.New()
	cases := []struct {
		name string
		key  core.APIKey
		want string
	}{
		{"Active", core.APIKey{}, ""},
		{"ExpiresLater", core.APIKey{ExpiresAt: &future}, ""},
		{"ErrInGracePeriod", core.APIKey{ReplacedBy: &replacement, ExpiresAt: &future}, core.EAPIKeyAlreadyRotated},
		{"ErrRotatedAndExpired", core.APIKey{ReplacedBy: &replacement, ExpiresAt: &past}, core.EAPIKeyAlreadyRotated},
		{"ErrRevoked", core.APIKey{RevokedAt: &past}, core.EConflict},
		{"ErrExpired", core.APIKey{ExpiresAt: &past}, core.EConflict},
	}
	for _, tc := range cases {
		err := tc.key.CheckRotatable(now)
		if got := codeOf(err); got != tc.want {
			t.Errorf("%s: %v, want code %q", tc.name, err, tc.want)
		}
	}
}

func TestAPIKey_Principal(t *testing.T) {
	t.Parallel()
	business := uuid.New()
	k := &core.APIKey{ID: uuid.New(), OrganizationID: uuid.New(), Prefix: "sk_sandbox_abc", Environment: "sandbox",
		Scopes: []string{"usage:read", "api-keys:write"}, AllowedIPs: []string{"203.0.113.0/24"}, ConnectedBusinessID: &business}
	t.Run("KeyScopes", func(t *testing.T) {
		t.Parallel()
		p, err := k.Principal(k.Scopes)
		if err != nil {
			t.Fatal(err)
		}
		if p.Kind != core.PrincipalOrganization || p.OrganizationID != k.OrganizationID || p.Subject != "api_key:"+k.ID.String() ||
			p.KeyPrefix != k.Prefix || p.ConnectedBusinessID != &business || p.APIKeyID == nil || *p.APIKeyID != k.ID {
			t.Errorf("principal = %+v", p)
		}
		if len(p.Scopes) != 2 || !p.Scopes["usage:read"] || !p.Scopes["api-keys:write"] {
			t.Errorf("scopes = %v", p.Scopes)
		}
		if p.Restrictions == nil || p.Restrictions.Environment != "sandbox" || len(p.Restrictions.AllowedIPs) != 1 {
			t.Errorf("restrictions = %+v", p.Restrictions)
		}
	})
	t.Run("TokenScopes", func(t *testing.T) {
		t.Parallel()
		p, err := k.Principal([]string{"usage:read"})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Scopes) != 1 || !p.Scopes["usage:read"] {
			t.Errorf("scopes = %v, want the token's only", p.Scopes)
		}
	})
	t.Run("ErrStoredAddressUnreadable", func(t *testing.T) {
		t.Parallel()
		if _, err := (&core.APIKey{AllowedIPs: []string{"?"}}).Principal(nil); err == nil {
			t.Error("no error")
		}
	})
}

func TestAPIKey_TokenLifetime(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 10, 8, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	cases := []struct {
		name    string
		expires *time.Time
		want    time.Duration
		ok      bool
	}{
		{"NoExpiry", nil, core.AccessTokenLifetime, true},
		{"ExpiresLater", at(48 * time.Hour), core.AccessTokenLifetime, true},
		{"ExpiresSooner", at(10 * time.Minute), 10 * time.Minute, true},
		{"WholeSeconds", at(90*time.Second + 700*time.Millisecond), 90 * time.Second, true},
		{"OneSecondLeft", at(time.Second), time.Second, true},
		{"ErrLessThanASecond", at(999 * time.Millisecond), 0, false},
		{"ErrExpired", at(-time.Minute), 0, false},
	}
	for _, tc := range cases {
		got, ok := (&core.APIKey{ExpiresAt: tc.expires}).TokenLifetime(now)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAPIKey_TokenScopes(t *testing.T) {
	t.Parallel()
	k := &core.APIKey{Scopes: []string{"usage:read", "api-keys:write", "webhooks:read"}}
	scope := func(s string) *string { return &s }
	cases := []struct {
		name      string
		requested *string
		want      []string
		code      string
	}{
		{"EveryScopeOfTheKey", nil, []string{"usage:read", "api-keys:write", "webhooks:read"}, ""},
		{"One", scope("usage:read"), []string{"usage:read"}, ""},
		{"SeveralInRequestOrder", scope("webhooks:read usage:read"), []string{"webhooks:read", "usage:read"}, ""},
		{"RepeatedOnce", scope("usage:read  usage:read\twebhooks:read"), []string{"usage:read", "webhooks:read"}, ""},
		{"ErrNotHeld", scope("usage:read organizations:write"), nil, core.EInvalidScope},
		{"ErrEmpty", scope(""), nil, core.EInvalidScope},
		{"ErrBlank", scope("   "), nil, core.EInvalidScope},
		{"ErrPrefixOfHeld", scope("usage"), nil, core.EInvalidScope},
	}
	for _, tc := range cases {
		got, err := k.TokenScopes(tc.requested)
		if code := codeOf(err); code != tc.code || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v, code %q", tc.name, got, err, tc.want, tc.code)
		}
	}
}
