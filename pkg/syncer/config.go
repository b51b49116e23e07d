package syncer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FieldManager is the field manager of the syncer's writes. Its Update entry
// in managedFields owns webhooks[*].clientConfig.caBundle and the state
// annotation, nothing else. Earlier builds wrote with server-side apply
// under the same name; see releaseApplyEntry.
const FieldManager = "cabundle-syncer"

// ControllerName names the controller in logs and in controller-runtime's
// metrics.
const ControllerName = "cabundle-syncer"

// The names of a standard installation (deploy/): the defaults of the
// syncer's flags, and of `cabundle-syncer check`, which looks at the same
// objects.
const (
	DefaultNamespace            = "kyma-system"
	DefaultSecretName           = "kim-snatch-certificates"
	DefaultCAKey                = "ca.crt"
	DefaultWebhookConfiguration = "kim-snatch-mutating-webhook-configuration"
	DefaultLeaseName            = "cabundle-syncer"
)

// Config names the two objects the syncer connects, and the overlap.
type Config struct {
	// SecretNamespace and SecretName name the Secret written by the
	// certificate issuer.
	SecretNamespace string
	SecretName      string
	// CAKey is the key in the Secret's data that holds the CA in PEM.
	CAKey string
	// WebhookConfiguration names the MutatingWebhookConfiguration whose
	// caBundle is kept.
	WebhookConfiguration string
	// Overlap is how long a CA stays in the bundle after it left the
	// Secret. Zero replaces the bundle at every rotation.
	Overlap time.Duration
}

// Validate reports every field that cannot work, checked with the API
// server's own rules so that a typo fails at startup, not at the first watch.
func (c Config) Validate() error {
	var errs []error
	check := func(what string, msgs []string) {
		if len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: %s", what, strings.Join(msgs, "; ")))
		}
	}
	check("secret namespace "+quote(c.SecretNamespace), validation.IsDNS1123Label(c.SecretNamespace))
	check("secret name "+quote(c.SecretName), validation.IsDNS1123Subdomain(c.SecretName))
	check("CA key "+quote(c.CAKey), validation.IsConfigMapKey(c.CAKey))
	check("webhook configuration "+quote(c.WebhookConfiguration), validation.IsDNS1123Subdomain(c.WebhookConfiguration))
	if c.Overlap < 0 {
		errs = append(errs, fmt.Errorf("CA overlap %s: must not be negative", c.Overlap))
	}
	return errors.Join(errs...)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
