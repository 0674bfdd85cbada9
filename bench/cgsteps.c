/* Named trampolines for counting a bench's steps with callgrind (bench/path.py builds this).

   step_<name>(f, *args, **kwargs) returns f(*args, **kwargs).  Each step is its own C function,
   so `callgrind_annotate --inclusive=yes` gives the instructions spent inside every step (the
   Python functions themselves are all the interpreter's one eval loop to callgrind).  Compiled
   without identical-code folding and sibling calls, so that every step keeps its own frame.
   start()/stop()/dump(name)/toggle() are callgrind's client requests; running() says whether the
   process runs under valgrind (they do nothing otherwise). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <valgrind/callgrind.h>

static volatile long step_calls;

#define STEP(name)                                                                          \
    static PyObject *__attribute__((noinline)) step_##name(PyObject *self, PyObject *const *args, \
                                                           Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                       \
        if (nargs < 1) {                                                                    \
            PyErr_SetString(PyExc_TypeError, "step_" #name "(f, *args): f missing");       \
            return NULL;                                                                    \
        }                                                                                   \
        PyObject *out = PyObject_Vectorcall(args[0], args + 1, nargs - 1, kwnames);         \
        step_calls += __LINE__;                                                             \
        return out;                                                                         \
    }

#define STEPS(X)                                                                            \
    X(parse) X(decide) X(copy) X(apply) X(reveal) X(evolve) X(stored) X(announce) X(message)\
    X(encode) X(write) X(reply) X(logline) X(pubsub) X(dispatch) X(publish) X(render)      \
    X(view) X(diff) X(pack) X(send) X(other1) X(other2) X(other3)

STEPS(STEP)

static PyObject *cg_start(PyObject *self, PyObject *unused)
{
    CALLGRIND_START_INSTRUMENTATION;
    Py_RETURN_NONE;
}

static PyObject *cg_stop(PyObject *self, PyObject *unused)
{
    CALLGRIND_STOP_INSTRUMENTATION;
    Py_RETURN_NONE;
}

static PyObject *cg_dump(PyObject *self, PyObject *arg)
{
    const char *name = PyUnicode_AsUTF8(arg);
    if (name == NULL)
        return NULL;
    CALLGRIND_DUMP_STATS_AT(name);
    Py_RETURN_NONE;
}

static PyObject *cg_zero(PyObject *self, PyObject *unused)
{
    CALLGRIND_ZERO_STATS;
    Py_RETURN_NONE;
}

static PyObject *cg_toggle(PyObject *self, PyObject *unused)
{
    CALLGRIND_TOGGLE_COLLECT;
    Py_RETURN_NONE;
}

static PyObject *cg_running(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong((long)RUNNING_ON_VALGRIND);
}

#define ENTRY(name) {"step_" #name, (PyCFunction)(void (*)(void))step_##name, METH_FASTCALL | METH_KEYWORDS, NULL},

static PyMethodDef methods[] = {
    STEPS(ENTRY)
    {"start", cg_start, METH_NOARGS, NULL},
    {"stop", cg_stop, METH_NOARGS, NULL},
    {"dump", cg_dump, METH_O, NULL},
    {"zero", cg_zero, METH_NOARGS, NULL},
    {"toggle", cg_toggle, METH_NOARGS, NULL},
    {"running", cg_running, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

#define NAME_(name) #name,
static const char *const step_names[] = {STEPS(NAME_) NULL};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "cgsteps", NULL, -1, methods};

PyMODINIT_FUNC PyInit_cgsteps(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    PyObject *names = PyTuple_New(0);
    for (int i = 0; step_names[i] != NULL; i++) {
        PyObject *s = PyUnicode_FromString(step_names[i]);
        if (s == NULL || _PyTuple_Resize(&names, i + 1) < 0)
            return NULL;
        PyTuple_SET_ITEM(names, i, s);
    }
    if (PyModule_AddObject(m, "STEPS", names) < 0)
        return NULL;
    return m;
}
