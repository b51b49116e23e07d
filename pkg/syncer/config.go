package syncer

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kyma-project/kim-snatch/pkg/validate"
)

// FieldManager is the field manager of the syncer's writes
// (docs/architecture.md, "Decision: a JSON patch, not server-side apply").
const FieldManager = "cabundle-syncer"

// ControllerName names the controller in logs and in controller-runtime's metrics.
const ControllerName = "cabundle-syncer"

// The names of a standard installation (deploy/): the defaults of the
// flags of the syncer and of `cabundle-syncer check`.
const (
	DefaultNamespace            = "kyma-system"
	DefaultSecretName           = "kim-snatch-certificates"
	DefaultCAKey                = "ca.crt"
	DefaultWebhookConfiguration = "kim-snatch-mutating-webhook-configuration"
	DefaultLeaseName            = "cabundle-syncer"
	// DefaultReleaseFieldManager is the field manager of the single-binary
	// kim-snatch, which force-applies the whole MutatingWebhookConfiguration
	// at every certificate load.
	DefaultReleaseFieldManager = "snatch"
)

// Config names the two objects the syncer connects, and the overlap.
type Config struct {
	SecretNamespace, SecretName string        // the Secret written by the certificate issuer
	CAKey                       string        // the key in the Secret's data that holds the CA in PEM
	WebhookConfiguration        string        // the MutatingWebhookConfiguration whose caBundle is kept
	Overlap                     time.Duration // how long a CA stays after it left the Secret; 0 replaces the bundle
	// ReleaseFieldManagers are retired field managers: the syncer removes
	// their server-side apply entries from the managedFields of the
	// MutatingWebhookConfiguration at every sync. None turns that off.
	ReleaseFieldManagers []string
}

// Validate reports every field that cannot work, checked with the API
// server's own rules so that a typo fails at startup, not at the first watch.
func (c Config) Validate() error {
	var errs validate.Errors
	c.ValidateNames(&errs, FieldNames{"secret namespace", "secret name", "CA key", "webhook configuration"})
	if c.Overlap < 0 {
		errs.Addf("CA overlap %s: must not be negative", c.Overlap)
	}
	c.validateReleaseFieldManagers(&errs)
	return errs.Err()
}

// validateReleaseFieldManagers adds an empty name and the syncer's own: the
// Apply entry of its earlier builds is released at start in any case
// (docs/operations.md, "Upgrade").
func (c Config) validateReleaseFieldManagers(errs *validate.Errors) {
	list := strings.Join(c.ReleaseFieldManagers, ",")
	for _, m := range c.ReleaseFieldManagers {
		switch m {
		case "":
			errs.Addf("field managers to release %q: a name is empty", list)
		case FieldManager:
			errs.Addf("field managers to release %q: %s is the syncer's own field manager", list, m)
		}
	}
}

// FieldNames name the fields ValidateNames checks, as its messages call
// them: by their description, or by the flags that set them.
type FieldNames struct{ SecretNamespace, SecretName, CAKey, WebhookConfiguration string }

// ValidateNames adds to errs the problems of the object names and the CA key.
func (c Config) ValidateNames(errs *validate.Errors, names FieldNames) {
	errs.Field(names.SecretNamespace, c.SecretNamespace, validation.IsDNS1123Label)
	errs.Field(names.SecretName, c.SecretName, validation.IsDNS1123Subdomain)
	errs.Field(names.CAKey, c.CAKey, validation.IsConfigMapKey)
	errs.Field(names.WebhookConfiguration, c.WebhookConfiguration, validation.IsDNS1123Subdomain)
}

// LeaderIdentity is how a replica in Pod pod holds the Lease: <pod>_<uuid>.
// A Pod name never contains "_", so HolderPodName finds the Pod again; the
// uuid keeps two processes of one Pod, such as a restarted container, apart.
func LeaderIdentity(pod string) string {
	return pod + "_" + string(uuid.NewUUID())
}

// HolderPodName returns the Pod name in an identity LeaderIdentity made:
// everything before the last "_", or the whole identity if it has none.
func HolderPodName(identity string) string {
	if i := strings.LastIndex(identity, "_"); i >= 0 {
		return identity[:i]
	}
	return identity
}
