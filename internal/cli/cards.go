package cli

import (
	"strconv"

	"github.com/strongroom/strongroom/client/api"
)

var cardHeader = []string{"ID", "CARD", "HOLDER", "STATUS", "FROZEN", "SPENT THIS MONTH", "MONTHLY LIMIT"}

func cardRow(c api.Card) []string {
	holder := "-"
	if c.User != nil {
		holder = string(c.User.Email)
	}
	if c.CardHolderName != nil && *c.CardHolderName != "" {
		holder = *c.CardHolderName
	}
	frozen := "no"
	if c.Frozen {
		frozen = "yes"
	}
	return []string{c.Id.String(), "•••• " + c.LastFour, holder, string(c.Status), frozen,
		money(c.Limit.SpentThisMonth, string(c.Limit.Currency)), money(strconv.Itoa(c.Limit.MonthlyLimit), string(c.Limit.Currency))}
}

func cardsList(e *env, args []string) error {
	fs := e.flags("cards list", "cards list [--org ORG] [-o json]")
	e.common(fs, true)
	org, err := e.parseForOrg(fs, args)
	if err != nil {
		return err
	}
	return printList(e, e.c.Cards(e.ctx, org, nil), cardHeader, cardRow)
}

func cardsFreeze(e *env, args []string) error   { return cardAction(e, "freeze", args) }
func cardsUnfreeze(e *env, args []string) error { return cardAction(e, "unfreeze", args) }

func cardAction(e *env, sub string, args []string) error {
	fs := e.flags("cards "+sub, "cards "+sub+" ID [-o json]")
	e.common(fs, false)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("cards %s takes one card id", sub)
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	var card *api.Card
	if sub == "freeze" {
		card, err = c.FreezeCard(e.ctx, pos[0])
	} else {
		card, err = c.UnfreezeCard(e.ctx, pos[0])
	}
	if err != nil {
		return err
	}
	if e.jsonOut() {
		return e.printJSON(card)
	}
	return e.table(cardHeader, [][]string{cardRow(*card)})
}
