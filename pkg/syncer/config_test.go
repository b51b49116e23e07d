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
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr []string
	}{
		{name: "defaults", mutate: func(*Config) {}},
		{name: "overlap_0", mutate: func(c *Config) { c.Overlap = 0 }},
		{name: "negative_overlap", mutate: func(c *Config) { c.Overlap = -time.Second }, wantErr: []string{"CA overlap"}},
		{name: "empty_namespace", mutate: func(c *Config) { c.SecretNamespace = "" }, wantErr: []string{"secret namespace"}},
		{name: "namespace_with_dot", mutate: func(c *Config) { c.SecretNamespace = "kyma.system" }, wantErr: []string{"secret namespace"}},
		{name: "upper_case_secret", mutate: func(c *Config) { c.SecretName = "Certs" }, wantErr: []string{"secret name"}},
		{name: "ca_key_with_slash", mutate: func(c *Config) { c.CAKey = "certs/ca.crt" }, wantErr: []string{"CA key"}},
		{name: "empty_webhook_configuration", mutate: func(c *Config) { c.WebhookConfiguration = "" }, wantErr: []string{"webhook configuration"}},
		{name: "release_nothing", mutate: func(c *Config) { c.ReleaseFieldManagers = nil }},
		{name: "release_two_managers", mutate: func(c *Config) { c.ReleaseFieldManagers = []string{"snatch", "manager-b"} }},
		{
			name:    "release_an_empty_name",
			mutate:  func(c *Config) { c.ReleaseFieldManagers = []string{"snatch", ""} },
			wantErr: []string{`field managers to release "snatch,": a name is empty`},
		},
		{
			name:    "release_only_an_empty_name",
			mutate:  func(c *Config) { c.ReleaseFieldManagers = []string{""} },
			wantErr: []string{"a name is empty"},
		},
		{
			name:    "release_the_own_manager",
			mutate:  func(c *Config) { c.ReleaseFieldManagers = []string{"snatch", FieldManager} },
			wantErr: []string{"cabundle-syncer is the syncer's own field manager"},
		},
		{
			name:    "every_error_reported",
			mutate:  func(c *Config) { *c = Config{Overlap: -1, ReleaseFieldManagers: []string{"", FieldManager}} },
			wantErr: []string{"secret namespace", "secret name", "CA key", "webhook configuration", "CA overlap", "a name is empty", "syncer's own"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid
			tt.mutate(&c)
			cmdlinetest.MentionsEach(t, c.Validate(), tt.wantErr)
		})
	}
}
