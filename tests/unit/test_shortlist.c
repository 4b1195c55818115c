/*
 * test_shortlist.c - lists in messages: shortened to their budget, never
 * cut inside an item, with a count of what is left out.
 */
#include <string.h>

#include "shortlist.h"
#include "t.h"

static void test_empty(void)
{
	struct shortlist l = SHORTLIST_INIT(100);

	T_STREQ(shortlist_str(&l, "none"), "none");
	shortlist_release(&l);
}

static void test_fits(void)
{
	struct shortlist l = SHORTLIST_INIT(100);

	T_INTEQ(shortlist_add(&l, "%s", "a.B"), 0);
	T_INTEQ(shortlist_add(&l, "%s (%d)", "c.D", 2), 0);
	T_STREQ(shortlist_str(&l, "none"), "a.B, c.D (2)");
	/* Asking again gives the same text. */
	T_STREQ(shortlist_str(&l, "none"), "a.B, c.D (2)");
	shortlist_release(&l);
}

static void test_more(void)
{
	struct shortlist l = SHORTLIST_INIT(20);
	int i;

	/* "aaaa, bbbb, cccc" is 16 bytes; "dddd" would make 22. */
	for (i = 0; i < 10; i++)
		T_INTEQ(shortlist_add(&l, "%c%c%c%c", 'a' + i, 'a' + i,
				      'a' + i, 'a' + i), 0);
	T_STREQ(shortlist_str(&l, ""), "aaaa, bbbb, cccc and 7 more");
	T_INTEQ(l.n, 10);
	shortlist_release(&l);
}

static void test_order_kept(void)
{
	struct shortlist l = SHORTLIST_INIT(12);

	/* A short item after one that did not fit is not shown out of
	 * order. */
	shortlist_add(&l, "%s", "abcd");
	shortlist_add(&l, "%s", "a-very-long-item");
	shortlist_add(&l, "%s", "x");
	T_STREQ(shortlist_str(&l, ""), "abcd and 2 more");
	shortlist_release(&l);
}

static void test_first_always(void)
{
	struct shortlist l = SHORTLIST_INIT(5);
	char big[300];

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	shortlist_add(&l, "%s", big);
	shortlist_add(&l, "%s", "y");
	T_INTEQ(strncmp(shortlist_str(&l, ""), big, sizeof(big) - 1), 0);
	T_STREQ(shortlist_str(&l, "") + sizeof(big) - 1, " and 1 more");
	shortlist_release(&l);
}

int main(void)
{
	T_RUN(test_empty);
	T_RUN(test_fits);
	T_RUN(test_more);
	T_RUN(test_order_kept);
	T_RUN(test_first_always);
	return T_DONE();
}
