/* SPDX-License-Identifier: GPL-2.0-or-later */
/* parser.y - the config grammar (nfqd.conf(5)); checks in conf_*.c. */
%define api.pure full
%define api.prefix {nfqd_yy}
%define api.token.prefix {TOK_}
%define parse.error custom
%define parse.lac full
%locations
%lex-param {void *scanner}
%parse-param {void *scanner} {struct pstate *st}

%code requires {
#include "conf_parse.h"
}

%code provides {
int nfqd_yylex(NFQD_YYSTYPE *lval, NFQD_YYLTYPE *lloc, void *scanner);
}

%code {
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct conf_loc mkloc(struct pstate *st, const NFQD_YYLTYPE *l)
{
	struct conf_loc loc = { st->file, (unsigned)l->first_line,
				(unsigned)l->first_column };
	return loc;
}

static void nfqd_yyerror(NFQD_YYLTYPE *l, void *scanner, struct pstate *st,
			 const char *msg)
{
	struct conf_loc loc = mkloc(st, l);

	if (strcmp(msg, "memory exhausted") == 0)
		st->nomem = true;
	conf_error(st, &loc, "%s", msg);
}

#define LOC(l)	(&(struct conf_loc){ st->file, (unsigned)(l).first_line, \
				     (unsigned)(l).first_column })
}

%initial-action {
	@$.first_line = @$.last_line = 1;
	@$.first_column = @$.last_column = 1;
}

%union {
	struct atom atom;
	struct pelem *elem;
	struct pval *val;
	struct item *item;
	struct items *items;
	int flag;
	const char *kw;
}

%token <atom> WORD "name" NUM "number" STR "string" ADDR "address"
%token <atom> SETREF "@set"
%token NEQ "!="
%token OPTIONS "options" SET "set" HOOK "hook" POLICY "policy"
%token IP "ip" IP6 "ip6" TCP "tcp" UDP "udp" ICMP "icmp" ICMPV6 "icmpv6"
%token META "meta" CT "ct" LIMIT "limit" IIFNAME "iifname" OIFNAME "oifname"
%token DNS "dns" TLS "tls" HTTP "http" ECH "ech"
%token COUNTER "counter" LOG "log" MARK "mark" BYPASS "bypass"
%token ACCEPT "accept" DROP "drop" REPEAT "repeat" QUEUE "queue"
%token ADD "add" UPDATE "update" PER "per"

%type <atom> atom field
%type <elem> elem limarg
%type <val> elemlist value limargs
%type <item> item match stmt verdict
%type <items> items rule
%type <flag> neg
%type <kw> setkey setverb

%destructor { conf_atom_clear(&$$); } <atom>
%destructor { conf_pelem_free($$); } <elem>
%destructor { conf_pval_free($$); } <val>
%destructor { conf_item_free($$); } <item>
%destructor { conf_items_free($$); } <items>

%%

config		: %empty
		| config block
		;

block		: OPTIONS '{' opt_stmts '}'
		| OPTIONS '{' opt_stmts error '}'	{ yyerrok; }
		| set_head set_stmts '}'
			{ conf_pst_set_end(st); }
		| set_head set_stmts error '}'
			{ conf_pst_set_end(st); yyerrok; }
		| hook_head hook_stmts '}'
			{ conf_pst_hook_end(st); }
		| hook_head hook_stmts error '}'
			{ conf_pst_hook_end(st); yyerrok; }
		| error '}'
		;

set_head	: SET WORD '{'		{ conf_pst_set_begin(st, &$2);
					  conf_atom_clear(&$2); }
		;

hook_head	: HOOK WORD '{'		{ conf_pst_hook_begin(st, &$2);
					  conf_atom_clear(&$2); }
		;

opt_stmts	: %empty
		| opt_stmts opt_stmt
		;

opt_stmt	: WORD value ';'	{ conf_pst_option(st, &$1, $2);
					  conf_atom_clear(&$1);
					  conf_pval_free($2); }
		| WORD verdict ';'
			{ conf_pst_option_verdict(st, &$1, $2);
			  conf_atom_clear(&$1); conf_item_free($2); }
		| error ';'		{ yyerrok; }
		;

set_stmts	: %empty
		| set_stmts set_stmt
		;

set_stmt	: WORD value ';'
			{ conf_pst_set_prop(st, &$1, false, &$2);
			  conf_atom_clear(&$1); conf_pval_free($2); }
		| WORD '=' value ';'
			{ conf_pst_set_prop(st, &$1, true, &$3);
			  conf_atom_clear(&$1); conf_pval_free($3); }
		| error ';'		{ yyerrok; }
		;

hook_stmts	: %empty
		| hook_stmts hook_stmt
		;

hook_stmt	: POLICY verdict ';'
			{ conf_pst_hook_policy(st, $2, NULL);
			  conf_item_free($2); }
		| POLICY WORD ';'
			{ conf_pst_hook_policy(st, NULL, &$2);
			  conf_atom_clear(&$2); }
		| rule ';'		{ conf_pst_rule(st, $1, LOC(@2)); }
		| error ';'		{ yyerrok; }
		;

/* Nothing may follow the verdict: "expecting ';'" says it best. */
rule		: items
		| items verdict		{ $$ = $1;
					  if (conf_items_add($$, $2)) {
						  conf_items_free($$);
						  YYNOMEM;
					  } }
		| verdict		{ $$ = conf_items_new($1);
					  if (!$$) YYNOMEM; }
		;

items		: item			{ $$ = conf_items_new($1);
					  if (!$$) YYNOMEM; }
		| items item		{ $$ = $1;
					  if (conf_items_add($$, $2)) {
						  conf_items_free($$);
						  YYNOMEM;
					  } }
		;

item		: match
		| stmt
		;

match		: IP field neg value
			{ $$ = conf_pst_match(st, "ip", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| IP6 field neg value
			{ $$ = conf_pst_match(st, "ip6", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| TCP field neg value
			{ $$ = conf_pst_match(st, "tcp", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| UDP field neg value
			{ $$ = conf_pst_match(st, "udp", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| ICMP field neg value
			{ $$ = conf_pst_match(st, "icmp", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| ICMPV6 field neg value
			{ $$ = conf_pst_match(st, "icmpv6", LOC(@1), &$2, $3,
					     $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| META field neg value
			{ $$ = conf_pst_match(st, "meta", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| CT field neg value
			{ $$ = conf_pst_match(st, "ct", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| IIFNAME neg value
			{ $$ = conf_pst_match(st, "iifname", LOC(@1), NULL, $2,
					     $3);
			  conf_pval_free($3);
			  if (!$$) YYNOMEM; }
		| OIFNAME neg value
			{ $$ = conf_pst_match(st, "oifname", LOC(@1), NULL, $2,
					     $3);
			  conf_pval_free($3);
			  if (!$$) YYNOMEM; }
		| DNS field neg value
			{ $$ = conf_pst_match(st, "dns", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| TLS field neg value
			{ $$ = conf_pst_match(st, "tls", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| TLS ECH
			{ struct atom ech = { ATOM_WORD, (char *)"ech", 0,
					      false, *LOC(@2) };
			  $$ = conf_pst_match(st, "tls", LOC(@1), &ech, 0,
					      NULL);
			  if (!$$) YYNOMEM; }
		| HTTP field neg value
			{ $$ = conf_pst_match(st, "http", LOC(@1), &$2, $3, $4);
			  conf_atom_clear(&$2); conf_pval_free($4);
			  if (!$$) YYNOMEM; }
		| LIMIT limargs
			{ $$ = conf_pst_limit(st, LOC(@1), $2);
			  conf_pval_free($2);
			  if (!$$) YYNOMEM; }
		| LIMIT limargs PER setkey field
			{ $$ = conf_pst_limit_per(st, LOC(@1), $2, $4, &$5,
						  NULL);
			  conf_pval_free($2); conf_atom_clear(&$5);
			  if (!$$) YYNOMEM; }
		| LIMIT limargs PER setkey field limargs
			{ $$ = conf_pst_limit_per(st, LOC(@1), $2, $4, &$5,
						  $6);
			  conf_pval_free($2); conf_atom_clear(&$5);
			  conf_pval_free($6);
			  if (!$$) YYNOMEM; }
		;

/* "limit rate [over] N/UNIT [burst M [packets]]": words, numbers and
 * N/UNIT up to the next keyword; conf_pst_limit() reads them. "per"
 * (a keyword) and its key may come before the burst or after it. */
limargs		: limarg		{ $$ = conf_pval_new($1, LOC(@1));
					  if (!$$) YYNOMEM; }
		| limargs limarg	{ $$ = $1;
					  if (conf_pval_add($$, $2)) {
						  conf_pval_free($$);
						  YYNOMEM;
					  } }
		;

limarg		: WORD			{ $$ = conf_pelem_new(PE_ONE, &$1,
							      NULL);
					  if (!$$) YYNOMEM; }
		| NUM			{ $$ = conf_pelem_new(PE_ONE, &$1,
							      NULL);
					  if (!$$) YYNOMEM; }
		| NUM '/' WORD		{ $$ = conf_pelem_new(PE_SLASH, &$1,
							      &$3);
					  if (!$$) YYNOMEM; }
		;

/* "meta mark": the field word may be a keyword elsewhere. */
field		: WORD
		| MARK			{ memset(&$$, 0, sizeof($$));
					  $$.kind = ATOM_WORD;
					  $$.loc = *LOC(@1);
					  $$.text = strdup("mark");
					  if (!$$.text) YYNOMEM; }
		;

neg		: %empty		{ $$ = 0; }
		| NEQ			{ $$ = 1; }
		;

stmt		: COUNTER
			{ $$ = conf_pst_stmt(st, IT_COUNTER, LOC(@1), NULL,
					    NULL);
			  if (!$$) YYNOMEM; }
		| LOG
			{ $$ = conf_pst_stmt(st, IT_LOG, LOC(@1), NULL, NULL);
			  if (!$$) YYNOMEM; }
		| LOG WORD STR
			{ $$ = conf_pst_stmt(st, IT_LOG, LOC(@1), &$2, &$3);
			  conf_atom_clear(&$2); conf_atom_clear(&$3);
			  if (!$$) YYNOMEM; }
		| MARK SET NUM
			{ $$ = conf_pst_stmt(st, IT_MARK, LOC(@1), &$3, NULL);
			  conf_atom_clear(&$3); if (!$$) YYNOMEM; }
		| BYPASS
			{ $$ = conf_pst_stmt(st, IT_BYPASS, LOC(@1), NULL,
					    NULL);
			  if (!$$) YYNOMEM; }
		| setverb SETREF '{' setkey field '}'
			{ $$ = conf_pst_setadd(st, $1, &$2, $4, &$5, NULL,
					      NULL);
			  conf_atom_clear(&$2);
			  conf_atom_clear(&$5); if (!$$) YYNOMEM; }
		| setverb SETREF '{' setkey field WORD WORD '}'
			{ $$ = conf_pst_setadd(st, $1, &$2, $4, &$5, &$6,
					      &$7);
			  conf_atom_clear(&$2);
			  conf_atom_clear(&$5); conf_atom_clear(&$6);
			  conf_atom_clear(&$7); if (!$$) YYNOMEM; }
		;

setverb		: ADD			{ $$ = "add"; }
		| UPDATE		{ $$ = "update"; }
		;

setkey		: IP			{ $$ = "ip"; }
		| IP6			{ $$ = "ip6"; }
		| TCP			{ $$ = "tcp"; }
		| UDP			{ $$ = "udp"; }
		;

verdict		: ACCEPT
			{ $$ = conf_pst_verdict(st, VERDICT_ACCEPT, LOC(@1),
					       NULL, NULL);
			  if (!$$) YYNOMEM; }
		| DROP
			{ $$ = conf_pst_verdict(st, VERDICT_DROP, LOC(@1),
					       NULL, NULL);
			  if (!$$) YYNOMEM; }
		| REPEAT
			{ $$ = conf_pst_verdict(st, VERDICT_REPEAT, LOC(@1),
					       NULL, NULL);
			  if (!$$) YYNOMEM; }
		| QUEUE NUM
			{ $$ = conf_pst_verdict(st, VERDICT_QUEUE, LOC(@1),
					       NULL, &$2);
			  conf_atom_clear(&$2); if (!$$) YYNOMEM; }
		| QUEUE WORD NUM
			{ $$ = conf_pst_verdict(st, VERDICT_QUEUE, LOC(@1),
					       &$2, &$3);
			  conf_atom_clear(&$2); conf_atom_clear(&$3);
			  if (!$$) YYNOMEM; }
		;

value		: elemlist		{ $$ = $1;
					  $$->comma = $$->n > 1; }
		| '{' elemlist '}'	{ $$ = $2; $$->list = true;
					  $$->loc = *LOC(@1); }
		| '{' elemlist ',' '}'	{ $$ = $2; $$->list = true;
					  $$->loc = *LOC(@1); }
		| '{' '}'		{ $$ = conf_pval_new(NULL, LOC(@1));
					  if (!$$) YYNOMEM;
					  $$->list = true; }
		| SETREF		{ $$ = conf_pval_new(NULL, LOC(@1));
					  if (!$$) {
						  conf_atom_clear(&$1);
						  YYNOMEM;
					  }
					  $$->setref = $1.text; }
		;

elemlist	: elem			{ $$ = conf_pval_new($1, LOC(@1));
					  if (!$$) YYNOMEM; }
		| elemlist ',' elem	{ $$ = $1;
					  if (conf_pval_add($$, $3)) {
						  conf_pval_free($$);
						  YYNOMEM;
					  } }
		;

elem		: atom			{ $$ = conf_pelem_new(PE_ONE,
							&$1, NULL);
					  if (!$$) YYNOMEM; }
		| atom '-' atom		{ $$ = conf_pelem_new(PE_RANGE,
							&$1, &$3);
					  if (!$$) YYNOMEM; }
		| atom '/' atom		{ $$ = conf_pelem_new(PE_SLASH,
							&$1, &$3);
					  if (!$$) YYNOMEM; }
		;

/* Protocol names and "mark" are keywords elsewhere; here they are words. */
atom		: NUM | ADDR | WORD | STR
		| TCP			{ $$ = (struct atom){ ATOM_WORD,
					  strdup("tcp"), 0, false, *LOC(@1) };
					  if (!$$.text) YYNOMEM; }
		| UDP			{ $$ = (struct atom){ ATOM_WORD,
					  strdup("udp"), 0, false, *LOC(@1) };
					  if (!$$.text) YYNOMEM; }
		| ICMP			{ $$ = (struct atom){ ATOM_WORD,
					  strdup("icmp"), 0, false, *LOC(@1) };
					  if (!$$.text) YYNOMEM; }
		| MARK			{ $$ = (struct atom){ ATOM_WORD,
					  strdup("mark"), 0, false, *LOC(@1) };
					  if (!$$.text) YYNOMEM; }
		| ICMPV6		{ $$ = (struct atom){ ATOM_WORD,
					  strdup("icmpv6"), 0, false,
					  *LOC(@1) };
					  if (!$$.text) YYNOMEM; }
		;

%%

/* Tokens whose name is a category ("name"), not the keyword itself. */
static bool is_category(yysymbol_kind_t k)
{
	return k == YYSYMBOL_YYEOF || k == YYSYMBOL_WORD ||
	       k == YYSYMBOL_NUM || k == YYSYMBOL_STR ||
	       k == YYSYMBOL_ADDR || k == YYSYMBOL_SETREF;
}

static void sym_name(char *buf, size_t len, yysymbol_kind_t k)
{
	const char *n = yysymbol_name(k);
	size_t l = strlen(n);

	if (is_category(k) && l >= 2 && n[0] == '"')
		snprintf(buf, len, "%.*s", (int)(l - 2), n + 1);
	else
		snprintf(buf, len, "%s", n);
}

static bool is_semi(yysymbol_kind_t k)
{
	return strcmp(yysymbol_name(k), "';'") == 0;
}

static bool is_punct(yysymbol_kind_t k)
{
	return yysymbol_name(k)[0] == '\'';
}

/*
 * "syntax error, unexpected X, expecting A or B". When ';' would end the
 * statement, that is all we suggest; when too many tokens would fit, we
 * name only the punctuation. Long lists of keywords help nobody.
 */
static int yyreport_syntax_error(const yypcontext_t *ctx, void *scanner,
				 struct pstate *st)
{
	yysymbol_kind_t exp[YYNTOKENS], tok = yypcontext_token(ctx);
	struct conf_loc loc = mkloc(st, yypcontext_location(ctx));
	char msg[512], name[64];
	int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
	size_t o = 0;
	int shown = 0, punct = 0, semi = 0, verdict = 0;

	for (int i = 0; i < n; i++)
		verdict |= exp[i] == YYSYMBOL_ACCEPT;
	/* A word where a rule goes on is most often a misspelt keyword:
	 * "expecting ';'" would send the reader the wrong way. */
	if (tok == YYSYMBOL_WORD && verdict && st->last_text) {
		conf_error(st, &loc, "unknown word \"%.40s\"; expected a match, a statement (counter, log, mark set, bypass) or a verdict (accept, drop, repeat, queue N)",
			   st->last_text);
		return 0;
	}

	sym_name(name, sizeof(name), tok);
	o += snprintf(msg + o, sizeof(msg) - o, "syntax error, unexpected %s",
		      name);
	if (tok == YYSYMBOL_STR && st->last_text)
		o += snprintf(msg + o, sizeof(msg) - o, " %.40s",
			      st->last_text);
	else if (tok != YYSYMBOL_YYEOF && is_category(tok) && st->last_text)
		o += snprintf(msg + o, sizeof(msg) - o, " \"%.40s\"",
			      st->last_text);
	for (int i = 0; i < n; i++) {
		punct += is_punct(exp[i]);
		semi |= is_semi(exp[i]);
	}
	for (int i = 0; i < n && o < sizeof(msg) - 80; i++) {
		if (semi && !is_semi(exp[i]))
			continue;
		if (n > 4 && !is_punct(exp[i]))
			continue;
		if (n > 4 && punct > 4)
			break;
		sym_name(name, sizeof(name), exp[i]);
		o += snprintf(msg + o, sizeof(msg) - o, "%s%s",
			      shown++ ? " or " : ", expecting ", name);
	}
	conf_error(st, &loc, "%s", msg);
	return 0;
}
