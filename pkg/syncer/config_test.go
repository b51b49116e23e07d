package syncer

import (
	"testing"
	"time"

	"github.com/kyma-project/kim-snatch/pkg/cmdline/cmdlinetest"
)

func TestConfigValidateReportsEveryInvalidField(t *testing.T) {
	valid := Config{
		SecretNamespace:      "kyma-system",
		SecretName:           "kim-snatch-certificates",
		CAKey:                "ca.crt",
		WebhookConfiguration: "kim-snatch-mutating-webhook-configuration",
		Overlap:              time.Hour,
		ReleaseFieldManagers: []string{DefaultReleaseFieldManager},
	}
	cmdlinetest.EachChange(t, func() Config { return valid }, Config.Validate, []cmdlinetest.Change[Config]{
		{Name: "defaults_are_valid", Mutate: func(*Config) {}},
		{Name: "overlap_0_is_valid", Mutate: func(c *Config) { c.Overlap = 0 }},
		{Name: "negative_overlap_is_refused", Mutate: func(c *Config) { c.Overlap = -time.Second }, WantErr: []string{"CA overlap"}},
		{Name: "empty_namespace_is_refused", Mutate: func(c *Config) { c.SecretNamespace = "" }, WantErr: []string{"secret namespace"}},
		{Name: "namespace_with_dot_is_refused", Mutate: func(c *Config) { c.SecretNamespace = "kyma.system" }, WantErr: []string{"secret namespace"}},
		{Name: "upper_case_secret_is_refused", Mutate: func(c *Config) { c.SecretName = "Certs" }, WantErr: []string{"secret name"}},
		{Name: "ca_key_with_slash_is_refused", Mutate: func(c *Config) { c.CAKey = "certs/ca.crt" }, WantErr: []string{"CA key"}},
		{Name: "empty_webhook_configuration_is_refused", Mutate: func(c *Config) { c.WebhookConfiguration = "" }, WantErr: []string{"webhook configuration"}},
		{Name: "release_nothing_is_valid", Mutate: func(c *Config) { c.ReleaseFieldManagers = nil }},
		{Name: "release_two_managers_is_valid", Mutate: func(c *Config) { c.ReleaseFieldManagers = []string{"snatch", "manager-b"} }},
		{
			Name:    "release_an_empty_name_is_refused",
			Mutate:  func(c *Config) { c.ReleaseFieldManagers = []string{"snatch", ""} },
			WantErr: []string{`field managers to release "snatch,": a name is empty`},
		},
		{
			Name:    "release_only_an_empty_name_is_refused",
			Mutate:  func(c *Config) { c.ReleaseFieldManagers = []string{""} },
			WantErr: []string{"a name is empty"},
		},
		{
			Name:    "release_the_own_manager_is_refused",
			Mutate:  func(c *Config) { c.ReleaseFieldManagers = []string{"snatch", FieldManager} },
			WantErr: []string{"cabundle-syncer is the syncer's own field manager"},
		},
		{
			Name:    "every_error_reported",
			Mutate:  func(c *Config) { *c = Config{Overlap: -1, ReleaseFieldManagers: []string{"", FieldManager}} },
			WantErr: []string{"secret namespace", "secret name", "CA key", "webhook configuration", "CA overlap", "a name is empty", "syncer's own"},
		},
	})
}
