/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * svcjob.c - the unit's running job (stop or restart) and its file
 * descriptor store, read from systemd over D-Bus (sd-bus): Unit.Job, then
 * Job.JobType; Service.FileDescriptorStoreMax and NFileDescriptorStore.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

#include "svcjob.h"

#define MANAGER		"org.freedesktop.systemd1"
#define BUS_TIMEOUT_US	2000000ULL

/* Root may use the manager's private socket (no dbus-daemon needed, as
 * systemctl does); anyone the system bus. */
static int bus_open(sd_bus **out)
{
	sd_bus *b = NULL;
	int rc;

	if (geteuid() == 0 && sd_bus_new(&b) >= 0) {
		if (sd_bus_set_address(b, "unix:path=/run/systemd/private") >= 0 &&
		    sd_bus_start(b) >= 0) {
			*out = b;
			return 0;
		}
		sd_bus_unref(b);
		b = NULL;
	}
	rc = sd_bus_open_system(&b);
	if (rc >= 0)
		*out = b;
	return rc;
}

/* The running job's type ("" if none); *TYPE is malloc'd. */
static int job_type(sd_bus *b, const char *unit_path, char **type)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *job_path = NULL;
	uint32_t id = 0;
	int rc;

	rc = sd_bus_get_property(b, MANAGER, unit_path,
				 "org.freedesktop.systemd1.Unit", "Job", &err,
				 &reply, "(uo)");
	if (rc >= 0)
		rc = sd_bus_message_read(reply, "(uo)", &id, &job_path);
	if (rc >= 0 && id == 0)
		*type = strdup("");
	else if (rc >= 0)
		rc = sd_bus_get_property_string(b, MANAGER, job_path,
						"org.freedesktop.systemd1.Job",
						"JobType", &err, type);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	if (rc >= 0 && !*type)
		rc = -ENOMEM;
	return rc;
}

static int service_u32(sd_bus *b, const char *unit_path, const char *name,
		       uint32_t *v)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	int rc = sd_bus_get_property_trivial(b, MANAGER, unit_path,
					     "org.freedesktop.systemd1.Service",
					     name, &err, 'u', v);

	sd_bus_error_free(&err);
	return rc;
}

static enum svc_stop decide(sd_bus *b, const char *unit, const char *path,
			    unsigned nstored, char *why, size_t size)
{
	uint32_t max = 0, held = 0;
	char *type = NULL;
	bool restart;
	int rc;

	rc = job_type(b, path, &type);
	if (rc < 0) {
		snprintf(why, size, "%s: cannot read the running job (%s)",
			 unit, strerror(-rc));
		return SVC_STOP_UNKNOWN;
	}
	restart = strcmp(type, "restart") == 0 ||
		  strcmp(type, "try-restart") == 0;
	if (service_u32(b, path, "FileDescriptorStoreMax", &max) < 0)
		max = 0;
	if (service_u32(b, path, "NFileDescriptorStore", &held) < 0)
		held = max;	/* not exported: trust the maximum */
	snprintf(why, size, "%s: job \"%s\", file descriptor store %u of %u for %u queue sockets",
		 unit, *type ? type : "none", held, max, nstored);
	free(type);
	if (!restart)
		return SVC_STOP_FINAL;
	return max && held >= nstored ? SVC_STOP_RESTART : SVC_STOP_FINAL;
}

char *svcjob_unit(void)
{
	char *unit = NULL;

	return sd_pid_get_unit(0, &unit) < 0 ? NULL : unit;
}

enum svc_stop svcjob_stop_kind(const char *unit, unsigned nstored, char *why,
			       size_t size)
{
	enum svc_stop kind = SVC_STOP_UNKNOWN;
	char *path = NULL;
	sd_bus *b = NULL;
	int rc;

	if (!unit) {
		snprintf(why, size, "not in a systemd unit");
		return SVC_STOP_NO_UNIT;
	}
	rc = bus_open(&b);
	if (rc >= 0)
		rc = sd_bus_set_method_call_timeout(b, BUS_TIMEOUT_US);
	if (rc >= 0)
		rc = sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit,
					&path);
	if (rc >= 0)
		kind = decide(b, unit, path, nstored, why, size);
	else
		snprintf(why, size, "%s: cannot reach systemd over D-Bus (%s)",
			 unit, strerror(-rc));
	free(path);
	sd_bus_flush_close_unref(b);
	return kind;
}
