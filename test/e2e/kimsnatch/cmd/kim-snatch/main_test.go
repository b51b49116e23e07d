package main

import (
	"io"
	"testing"
)

func TestFlagsOfTheOldManifestParseAndBadOnesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{
			name: "flags_of_the_old_manifest_parse",
			args: []string{"--health-probe-bind-address=:8081", "--kyma-worker-pool-name=cpu-worker-0", "--webhook-cfg-name=kim-snatch-mutating-webhook-configuration"},
			want: options{healthAddr: ":8081", workerPool: "cpu-worker-0", webhookConfigName: "kim-snatch-mutating-webhook-configuration", certDir: "/tmp"},
		},
		{
			name: "defaults_are_the_old_binarys",
			want: options{healthAddr: ":8081", workerPool: "cpu-worker-0", webhookConfigName: "kim-snatch-mutating-webhook-configuration", certDir: "/tmp"},
		},
		{name: "health_probes_off_is_refused", args: []string{"--health-probe-bind-address=0"}, wantErr: true},
		{name: "empty_pool_is_refused", args: []string{"--kyma-worker-pool-name="}, wantErr: true},
		{name: "unknown_flag_is_refused", args: []string{"--leader-elect"}, wantErr: true},
		{name: "arguments_are_refused", args: []string{"serve"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args, io.Discard)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("no error; options %+v", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
