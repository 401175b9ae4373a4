package cli

import (
	"fmt"
	"strings"

	"github.com/strongroom/strongroom/client/api"
)

func keyRow(k api.ApiKey) []string {
	state := "active"
	if k.RevokedAt != nil {
		state = "revoked"
	}
	scopes := strings.Join(k.Scopes, ",")
	return []string{k.Id.String(), k.Name, string(k.Role), orDash(scopes), state, whenPtr(k.LastUsedAt)}
}

var keyHeader = []string{"ID", "NAME", "ROLE", "SCOPES", "STATE", "LAST USED"}

// printSecret prints a key with its secret, shown this once.
func (e *env) printSecret(k *api.ApiKeyWithSecret) error {
	if e.jsonOut() {
		return e.printJSON(k)
	}
	if err := e.table(keyHeader, [][]string{keyRow(k.ApiKey)}); err != nil {
		return err
	}
	_, err := fmt.Fprintf(e.out, "\nSecret (shown this once; keep it secret):\n%s\n", k.Secret)
	return err
}

func keysCreate(e *env, args []string) error {
	fs := e.flags("keys create", "keys create --name NAME [--role member|admin] [--scope S]… [--org ORG] [-o json]")
	name := fs.String("name", "", "the key's `name`")
	role := fs.String("role", "member", "the key's `role`: member or admin")
	var scopes listFlag
	fs.Var(&scopes, "scope", "a `scope` (balances:read, transactions:read, …; repeat or comma-separate)")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *name == "" {
		return usageHelpf("keys create needs --name")
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	req := api.ApiKeyCreation{Name: *name, Role: api.ApiKeyRequestedRole(*role), Scopes: []api.ApiKeyScope{}}
	for _, s := range scopes {
		req.Scopes = append(req.Scopes, api.ApiKeyScope(s))
	}
	k, err := e.c.CreateAPIKey(e.ctx, org, req)
	if err != nil {
		return err
	}
	return e.printSecret(k)
}

func keysList(e *env, args []string) error {
	fs := e.flags("keys list", "keys list [--org ORG] [-o json]")
	e.common(fs, true)
	org, err := e.parseForOrg(fs, args)
	if err != nil {
		return err
	}
	return printList(e, e.c.APIKeys(e.ctx, org, nil), keyHeader, keyRow)
}

// keyArg parses "keys rotate|revoke ID".
func keyArg(e *env, sub string, args []string) (org, id string, err error) {
	fs := e.flags("keys "+sub, "keys "+sub+" ID [--org ORG] [-o json]")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return "", "", err
	}
	if len(pos) != 1 {
		return "", "", usageHelpf("keys %s takes one key id", sub)
	}
	org, err = e.orgID()
	return org, pos[0], err
}

func keysRotate(e *env, args []string) error {
	org, id, err := keyArg(e, "rotate", args)
	if err != nil {
		return err
	}
	k, err := e.c.RotateAPIKey(e.ctx, org, id)
	if err != nil {
		return err
	}
	if !e.jsonOut() {
		fmt.Fprintln(e.errw, "The previous secret keeps working for 24 hours.")
	}
	return e.printSecret(k)
}

func keysRevoke(e *env, args []string) error {
	org, id, err := keyArg(e, "revoke", args)
	if err != nil {
		return err
	}
	k, err := e.c.RevokeAPIKey(e.ctx, org, id)
	if err != nil {
		return err
	}
	if e.jsonOut() {
		return e.printJSON(k)
	}
	return e.table(keyHeader, [][]string{keyRow(*k)})
}
