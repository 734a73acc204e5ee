/*
 * condition.c — ConditionExpression and FilterExpression: a condition
 * checked under the item's row lock (a WriteCondition of item_store.h), the
 * DDB_ERROR_CONDITIONAL_CHECK_FAILED it raises, and a filter checked before
 * any item is read.
 */
#include "postgres.h"

#include "../ddb_errors.h"
#include "../item/item_codec.h"
#include "itemexpr.h"

/* A ConditionExpression to check under the item's row lock. */
typedef struct RequestCondition
{
	ExprNode   *cond;
	ExprHost	host;
	HostContext host_ctx;
	Jsonb	   *empty;			/* the item a missing item is checked as */
} RequestCondition;

/* WriteCondition callback: does the condition hold for the current item? */
static bool
condition_holds(void *arg, Jsonb *current)
{
	RequestCondition *rc = (RequestCondition *) arg;

	rc->host_ctx.item = &(current ? current : rc->empty)->root;
	return expr_eval_condition(rc->cond, &rc->host);
}

/* A ConditionExpression as a WriteCondition checked under the row lock; NULL for a NULL text. */
WriteCondition *
itemexpr_write_condition(Placeholders *ph, const char *text)
{
	RequestCondition *rc;
	WriteCondition *wc;

	if (text == NULL)
		return NULL;
	rc = palloc0(sizeof(RequestCondition));
	rc->cond = itemexpr_parse_condition(ph, "ConditionExpression", text);
	itemexpr_check(ph, "ConditionExpression", rc->cond);
	itemexpr_host(&rc->host_ctx, ph, "ConditionExpression", &rc->host);
	rc->empty = ddb_empty_object();
	wc = palloc(sizeof(WriteCondition));
	wc->holds = condition_holds;
	wc->arg = rc;
	return wc;
}

/*
 * Raises DDB_ERROR_CONDITIONAL_CHECK_FAILED for a condition (NULL: an update's
 * or put's own), with the current item in its body when return_item.
 */
void
itemexpr_raise_condition_failed(const char *condition, bool return_item, Jsonb *current)
{
	const char *message = "The conditional request failed";
	const DdbErrorType *type = ddb_error_type(DDB_ERROR_CONDITIONAL_CHECK_FAILED);
	char	   *body;

	if (return_item && current)
	{
		JsonbValue	item;

		ddb_binary_value(item_to_dynamodb(&current->root), &item);
		body = ddb_error_body(type, message, "Item", &item);
	}
	else
		body = ddb_error_body(type, message, NULL, NULL);
	/* the HINT names the condition that failed; the DETAIL stays DynamoDB's body */
	ereport(ERROR,
			(errcode(ERRCODE_DDB_CONDITIONAL_CHECK_FAILED),
			 errmsg("%s", message),
			 errdetail("%s", body),
			 condition ? errhint("The condition that failed: %s", condition) : 0));
}

/* A FilterExpression parsed and checked before any item is read; NULL for a NULL text. */
ExprNode *
itemexpr_parse_filter(Placeholders *ph, const char *text)
{
	ExprNode   *filter;

	if (text == NULL)
		return NULL;
	filter = itemexpr_parse_condition(ph, "FilterExpression", text);
	itemexpr_check(ph, "FilterExpression", filter);
	return filter;
}
