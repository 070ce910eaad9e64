-- +goose Up
-- Announces every change that can end or narrow a credential on the credentials_changed
-- channel, whoever makes it (the API, another process, an operator with psql), so the
-- credential caches of all processes forget what they hold (postgres.CredentialCache).
-- last_used_at and updated_at alone announce nothing: they change on use.
-- +goose StatementBegin
CREATE FUNCTION credentials_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('credentials_changed', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER api_keys_credentials_changed AFTER UPDATE ON api_keys FOR EACH ROW
    WHEN ((OLD.organization_id, OLD.prefix, OLD.secret_hash, OLD.environment, OLD.scopes, OLD.allowed_origins,
           OLD.allowed_ips, OLD.rate_limit_policy, OLD.expires_at, OLD.revoked_at, OLD.connected_business_id)
          IS DISTINCT FROM
          (NEW.organization_id, NEW.prefix, NEW.secret_hash, NEW.environment, NEW.scopes, NEW.allowed_origins,
           NEW.allowed_ips, NEW.rate_limit_policy, NEW.expires_at, NEW.revoked_at, NEW.connected_business_id))
    EXECUTE FUNCTION credentials_changed();
CREATE TRIGGER api_keys_credentials_deleted AFTER DELETE ON api_keys FOR EACH STATEMENT
    EXECUTE FUNCTION credentials_changed();
CREATE TRIGGER oauth_tokens_credentials_changed AFTER UPDATE OR DELETE ON oauth_tokens FOR EACH STATEMENT
    EXECUTE FUNCTION credentials_changed();
CREATE TRIGGER connected_businesses_credentials_changed AFTER UPDATE ON connected_businesses FOR EACH ROW
    WHEN (OLD.lifecycle_status IS DISTINCT FROM NEW.lifecycle_status)
    EXECUTE FUNCTION credentials_changed();
CREATE TRIGGER connected_businesses_credentials_deleted AFTER DELETE ON connected_businesses FOR EACH STATEMENT
    EXECUTE FUNCTION credentials_changed();

-- +goose Down
DROP TRIGGER connected_businesses_credentials_deleted ON connected_businesses;
DROP TRIGGER connected_businesses_credentials_changed ON connected_businesses;
DROP TRIGGER oauth_tokens_credentials_changed ON oauth_tokens;
DROP TRIGGER api_keys_credentials_deleted ON api_keys;
DROP TRIGGER api_keys_credentials_changed ON api_keys;
DROP FUNCTION credentials_changed();
