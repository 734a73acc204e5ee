/*
 * json_arena.c — a bump allocator for jansson.  Parsing a line of DynamoDB
 * JSON makes a value, a string and a hashtable for every attribute; with
 * malloc and free for each, the allocator costs about a quarter of the
 * import's parse.  From the arena, an allocation is an addition and a free
 * nothing, and the whole block is emptied when the line is done.  What does
 * not fit in the block comes from malloc, and goes back to free.
 */
#include "json_arena.h"

#include <jansson.h>
#include <stdlib.h>

/* A line's values take a few kilobytes; its largest items (400 KB) fit too. */
#define ARENA_SIZE (4 * 1024 * 1024)

static char *block;
static size_t used;

/* jansson's malloc: the next piece of the block, or malloc when the block is full. */
static void *
arena_malloc(size_t size)
{
	void	   *memory;

	size = (size + 15) & ~(size_t) 15;
	if (block == NULL || size > ARENA_SIZE - used)
		return malloc(size);
	memory = block + used;
	used += size;
	return memory;
}

/* jansson's free: nothing for a piece of the block (json_arena_end frees those). */
static void
arena_free(void *memory)
{
	if (block != NULL && (char *) memory >= block && (char *) memory < block + ARENA_SIZE)
		return;
	free(memory);
}

/* From here on, jansson allocates from the arena. */
void
json_arena_begin(void)
{
	if (block == NULL)
		block = malloc(ARENA_SIZE);
	used = 0;
	json_set_alloc_funcs(arena_malloc, arena_free);
}

/* Frees what jansson allocated since json_arena_begin; jansson uses malloc again. */
void
json_arena_end(void)
{
	used = 0;
	json_set_alloc_funcs(malloc, free);
}

/* Frees memory jansson gave while the arena was on, before json_arena_end. */
void
json_arena_free(void *memory)
{
	arena_free(memory);
}
