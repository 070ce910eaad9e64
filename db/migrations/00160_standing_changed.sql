-- +goose Up
-- Entitlement decisions (core.Entitle) read an organization's statuses and its subscriptions'
-- service status, and are cached exactly as credentials are (postgres.CredentialCache): so a
-- change of either is announced on the credentials_changed channel too, whoever makes it, and
-- every process forgets what it decided. A new subscription changes the decision as well (the
-- sandbox was open without one; a provisioning one refuses), and so does a deleted one.
CREATE TRIGGER organizations_credentials_changed AFTER UPDATE ON organizations FOR EACH ROW
    WHEN ((OLD.lifecycle_status, OLD.verification_status, OLD.risk_status)
          IS DISTINCT FROM
          (NEW.lifecycle_status, NEW.verification_status, NEW.risk_status))
    EXECUTE FUNCTION credentials_changed();
CREATE TRIGGER subscriptions_credentials_changed AFTER UPDATE ON subscriptions FOR EACH ROW
    WHEN (OLD.service_status IS DISTINCT FROM NEW.service_status)
    EXECUTE FUNCTION credentials_changed();
CREATE TRIGGER subscriptions_credentials_added_or_removed AFTER INSERT OR DELETE ON subscriptions FOR EACH STATEMENT
    EXECUTE FUNCTION credentials_changed();

-- +goose Down
DROP TRIGGER subscriptions_credentials_added_or_removed ON subscriptions;
DROP TRIGGER subscriptions_credentials_changed ON subscriptions;
DROP TRIGGER organizations_credentials_changed ON organizations;
