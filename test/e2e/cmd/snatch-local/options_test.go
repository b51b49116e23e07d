package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/kyma-project/kim-snatch/pkg/cmdline"
	"github.com/kyma-project/kim-snatch/test/framework"
)

func TestParseAcceptsOneToFiftyReplicasAndRefusesTheRestAsUsageErrors(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: make run's flags")
	framework.Shares(t)
	tests := []struct {
		name string
		args []string
		want Options
		// wantErr is a substring of the error; every error but -h is a
		// UsageError.
		wantErr string
	}{
		{
			name: "defaults_are_three_and_three",
			want: Options{KymaReplicas: 3, CustomerReplicas: 3},
		},
		{
			name: "every_flag_is_read",
			args: []string{"--kyma-replicas=5", "--customer-replicas", "1"},
			want: Options{KymaReplicas: 5, CustomerReplicas: 1},
		},
		{
			name:    "zero_kyma_replicas_refused",
			args:    []string{"--kyma-replicas=0"},
			wantErr: "--kyma-replicas must be between 1 and 50, got 0",
		},
		{
			name:    "too_many_kyma_replicas_refused",
			args:    []string{"--kyma-replicas=51"},
			wantErr: "--kyma-replicas must be between 1 and 50, got 51",
		},
		{
			name:    "too_many_customer_replicas_refused",
			args:    []string{"--customer-replicas=51"},
			wantErr: "--customer-replicas must be between 1 and 50, got 51",
		},
		{
			name:    "reports_every_bad_option_at_once",
			args:    []string{"--kyma-replicas=-1", "--customer-replicas=0"},
			wantErr: "--kyma-replicas must be between 1 and 50, got -1\n--customer-replicas must be between 1 and 50, got 0",
		},
		{
			name:    "positional_argument_refused",
			args:    []string{"extra"},
			wantErr: `unexpected arguments: ["extra"]`,
		},
		{
			name:    "unknown_flag_refused",
			args:    []string{"--replicas=3"},
			wantErr: "flag provided but not defined: -replicas",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parse(tt.args, io.Discard)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("parse: %v", err)
				}
				if got != tt.want {
					t.Errorf("options %+v, want %+v", got, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if !errors.As(err, new(cmdline.UsageError)) {
				t.Errorf("error %v is not a UsageError, so it would not exit 2", err)
			}
		})
	}
}

func TestHelpPrintsTheUsageOfEveryFlag(t *testing.T) {
	framework.InTier(t, framework.Smoke, "no node: make run's usage")
	framework.Shares(t)
	var b strings.Builder
	_, err := parse([]string{"-h"}, &b)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("error %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"Usage: snatch-local [flags]", "-kyma-replicas", "-customer-replicas"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, b.String())
		}
	}
}
