/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

/*
 * libpq, loaded when the first PostgreSQL source is made rather than
 * linked (docs/architecture.md §11.1, "Start-up and WebKit"): linking it
 * made every start of the window, and of the CLI, map and relocate libpq
 * with OpenSSL, OpenLDAP, Cyrus SASL and GnuTLS before main(), for a
 * session that may never touch PostgreSQL.
 *
 * Include this header instead of <libpq-fe.h>. It gives libpq's types and
 * constants as usual, and turns each libpq function Tally calls into a
 * pointer filled in by tally_pq_loader_load(). Call no libpq function
 * before that returned %TRUE (tally_pg_source_new() does it). A function
 * Tally starts to use is added to both lists below (the table and the
 * #defines).
 */

#include <libpq-fe.h>

#include <gio/gio.h>

G_BEGIN_DECLS

#define TALLY_PQ_FUNCTIONS(F) \
  F (int, PQcancel, (PGcancel *, char *, int)) \
  F (void, PQclear, (PGresult *)) \
  F (PostgresPollingStatusType, PQconnectPoll, (PGconn *)) \
  F (PGconn *, PQconnectStartParams, (const char * const *, const char * const *, int)) \
  F (void, PQconninfoFree, (PQconninfoOption *)) \
  F (PQconninfoOption *, PQconninfoParse, (const char *, char **)) \
  F (int, PQconsumeInput, (PGconn *)) \
  F (char *, PQerrorMessage, (const PGconn *)) \
  F (void, PQfinish, (PGconn *)) \
  F (char *, PQfname, (const PGresult *, int)) \
  F (void, PQfreeCancel, (PGcancel *)) \
  F (void, PQfreemem, (void *)) \
  F (Oid, PQftable, (const PGresult *, int)) \
  F (int, PQftablecol, (const PGresult *, int)) \
  F (Oid, PQftype, (const PGresult *, int)) \
  F (PGcancel *, PQgetCancel, (PGconn *)) \
  F (PGresult *, PQgetResult, (PGconn *)) \
  F (int, PQgetisnull, (const PGresult *, int, int)) \
  F (int, PQgetlength, (const PGresult *, int, int)) \
  F (char *, PQgetvalue, (const PGresult *, int, int)) \
  F (int, PQisBusy, (PGconn *)) \
  F (int, PQnfields, (const PGresult *)) \
  F (char *, PQresultErrorField, (const PGresult *, int)) \
  F (char *, PQresultErrorMessage, (const PGresult *)) \
  F (ExecStatusType, PQresultStatus, (const PGresult *)) \
  F (int, PQsendQuery, (PGconn *, const char *)) \
  F (int, PQsendQueryParams, (PGconn *, const char *, int, const Oid *, const char * const *, \
                              const int *, const int *, int)) \
  F (int, PQsetSingleRowMode, (PGconn *)) \
  F (int, PQsocket, (const PGconn *)) \
  F (ConnStatusType, PQstatus, (const PGconn *)) \
  F (PGTransactionStatusType, PQtransactionStatus, (const PGconn *))

/**
 * TallyPqApi:
 *
 * The libpq functions Tally calls, one pointer each, named after the
 * function; all %NULL until tally_pq_loader_load() succeeds.
 */
typedef struct
{
#define TALLY_PQ_POINTER(ret, name, args) ret (*name) args;
  TALLY_PQ_FUNCTIONS (TALLY_PQ_POINTER)
#undef TALLY_PQ_POINTER
} TallyPqApi;

extern TallyPqApi tally_pq_api;

gboolean tally_pq_loader_load      (GError **error);
gboolean tally_pq_loader_is_loaded (void);

/* The calls, through the table. */
#ifndef TALLY_PQ_LOADER_NO_REDIRECT
#define PQcancel (tally_pq_api.PQcancel)
#define PQclear (tally_pq_api.PQclear)
#define PQconnectPoll (tally_pq_api.PQconnectPoll)
#define PQconnectStartParams (tally_pq_api.PQconnectStartParams)
#define PQconninfoFree (tally_pq_api.PQconninfoFree)
#define PQconninfoParse (tally_pq_api.PQconninfoParse)
#define PQconsumeInput (tally_pq_api.PQconsumeInput)
#define PQerrorMessage (tally_pq_api.PQerrorMessage)
#define PQfinish (tally_pq_api.PQfinish)
#define PQfname (tally_pq_api.PQfname)
#define PQfreeCancel (tally_pq_api.PQfreeCancel)
#define PQfreemem (tally_pq_api.PQfreemem)
#define PQftable (tally_pq_api.PQftable)
#define PQftablecol (tally_pq_api.PQftablecol)
#define PQftype (tally_pq_api.PQftype)
#define PQgetCancel (tally_pq_api.PQgetCancel)
#define PQgetResult (tally_pq_api.PQgetResult)
#define PQgetisnull (tally_pq_api.PQgetisnull)
#define PQgetlength (tally_pq_api.PQgetlength)
#define PQgetvalue (tally_pq_api.PQgetvalue)
#define PQisBusy (tally_pq_api.PQisBusy)
#define PQnfields (tally_pq_api.PQnfields)
#define PQresultErrorField (tally_pq_api.PQresultErrorField)
#define PQresultErrorMessage (tally_pq_api.PQresultErrorMessage)
#define PQresultStatus (tally_pq_api.PQresultStatus)
#define PQsendQuery (tally_pq_api.PQsendQuery)
#define PQsendQueryParams (tally_pq_api.PQsendQueryParams)
#define PQsetSingleRowMode (tally_pq_api.PQsetSingleRowMode)
#define PQsocket (tally_pq_api.PQsocket)
#define PQstatus (tally_pq_api.PQstatus)
#define PQtransactionStatus (tally_pq_api.PQtransactionStatus)
#endif

G_END_DECLS
