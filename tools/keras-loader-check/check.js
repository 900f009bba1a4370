#!/usr/bin/env node
// check.js FILE.json...: load each Keras model JSON file with TensorFlow.js
// Layers' Keras deserializer (tf.models.modelFromJSON: Google's JavaScript
// port of Keras' model_from_json, Keras 2's form) and print one JSON line
// per file:
//
//   {"file": F, "ok": true, "class_name": "Functional", "name": "m",
//    "layers": N, "params": P, "trainable_params": T,
//    "inputs": [[null, 28, 28, 1], ...], "outputs": [[null, 10], ...]}
//   {"file": F, "ok": false, "error": "the loader's message"}
//
// "layers" is tfjs' model.layers.length (a Functional model lists its
// InputLayers, a Sequential model does not, as in Keras); "params" is
// model.countParams() (every weight, nested models' counted once as Keras
// counts them). Exit status: 0 when every file loaded, 1 when one did not,
// 2 on a usage error. This is TensorFlow.js' loader, not Python Keras': it
// is the nearest independent Keras deserializer that installs from npm.
//
// --stand-in Subtract registers Keras' Subtract, which tfjs lacks (below);
// --fast-orthogonal skips the Orthogonal initializer's slow QR (below);
// --predict SPEC.json runs each model on given weights and inputs (below).
'use strict';

const fs = require('fs');

// Stdout is for our JSON lines only: nothing tfjs logs while loading goes
// there, and its advice on stderr to install tfjs-node (native, which the
// check avoids) is left out; its other warnings are kept.
const realLog = console.log;
const realWarn = console.warn;
console.log = () => {};
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const tfl = require('@tensorflow/tfjs-layers');
console.log = realLog;
console.warn = (...args) => {
    if (!String(args[0]).includes('running TensorFlow.js in Node.js'))
        realWarn(...args);
};
registerChainedOps();

// --stand-in Subtract: Keras' Subtract layer, which tfjs-layers lacks (it
// has Add, Multiply, Average, Maximum, Minimum, Concatenate and Dot), as
// Keras defines it: exactly two inputs, the first less the second, on
// tfjs' own Merge base (shape checks, broadcasting). Off by default, so a
// plain run is tfjs' loader alone; the output line names stand-ins used.
const standIns = {
    Subtract() {
        const Merge = Object.getPrototypeOf(tfl.layers.add().constructor);
        class Subtract extends Merge {
            build(inputShape) {
                if (!Array.isArray(inputShape) || inputShape.length !== 2 || !Array.isArray(inputShape[0]))
                    throw new Error('A `Subtract` layer should be called on exactly 2 inputs');
                super.build(inputShape);
            }
            mergeFunction(inputs) {
                return tf.tidy(() => tf.sub(inputs[0], inputs[1]));
            }
        }
        Subtract.className = 'Subtract';
        tf.serialization.registerClass(Subtract);
    },
};

// tfjs-layers calls chained Tensor methods (the Orthogonal initializer's
// r.flatten(), ...), which tfjs-core's Node bundle does not register: its
// public/chained_ops/*.js files are ES modules that only the @tensorflow/tfjs
// union package bundles (with WebGL, the converter and tfjs-data, ~290 MB).
// Register them here as those files do: t.NAME(...args) is tf.NAME(t,
// ...args), the names read from the files themselves, and the few whose
// body is not that written out as they are there.
function registerChainedOps() {
    const path = require('path');
    const dir = path.join(path.dirname(require.resolve('@tensorflow/tfjs-core')), 'public', 'chained_ops');
    const proto = tf.Tensor.prototype;
    const withThis = (x) => (x instanceof tf.Tensor ? [x] : x);
    const special = {
        flatten() { return tf.reshape(this, [this.size]); },
        as1D() { return tf.reshape(this, [this.size]); },
        as2D(r, c) { return tf.reshape(this, [r, c]); },
        as3D(r, c, d) { return tf.reshape(this, [r, c, d]); },
        as4D(r, c, d, d2) { return tf.reshape(this, [r, c, d, d2]); },
        as5D(r, c, d, d2, d3) { return tf.reshape(this, [r, c, d, d2, d3]); },
        asScalar() { return tf.reshape(this, []); },
        asType(dtype) { return tf.cast(this, dtype); },
        toBool() { return tf.cast(this, 'bool'); },
        toFloat() { return tf.cast(this, 'float32'); },
        toInt() { return tf.cast(this, 'int32'); },
        reshapeAs(x) { return tf.reshape(this, x.shape); },
        concat(x, axis) { return tf.concat([this, ...withThis(x)], axis); },
        stack(x, axis) { return tf.stack([this, ...withThis(x)], axis); },
        where(condition, x) { return tf.where(condition, this, x); },
        resizeBilinear(...a) { return tf.image.resizeBilinear(this, ...a); },
        resizeNearestNeighbor(...a) { return tf.image.resizeNearestNeighbor(this, ...a); },
    };
    for (const file of fs.readdirSync(dir)) {
        if (!file.endsWith('.js') || file.endsWith('_test.js'))
            continue;
        const m = /prototype\.(\w+)\s*=\s*function/.exec(fs.readFileSync(path.join(dir, file), 'utf8'));
        if (!m || proto[m[1]])
            continue;
        const name = m[1];
        if (special[name])
            proto[name] = special[name];
        else if (typeof tf[name] === 'function')
            proto[name] = function (...args) { return tf[name](this, ...args); };
    }
}

function shapeOf(t) {
    return t.shape.map(d => (d === undefined ? null : d));
}

function countWeights(weights) {
    let n = 0;
    for (const w of weights)
        n += w.shape.reduce((a, b) => a * b, 1);
    return n;
}

// --predict SPEC.json: {"weights": {layer name: [{"shape", "values"}...]},
// "inputs": [{"shape", "values"}...]}. Each layer with weights takes the
// ones named for it (its own order, Keras': kernel, bias; gamma, beta,
// moving mean, moving variance; ...), every such layer must have them, and
// the model's outputs for the inputs (batch first) are added to the line
// as "predictions": [{"shape", "values"}...]. Values are flat, row-major.
function tensorOf(entry) {
    return tf.tensor(Float32Array.from(entry.values), entry.shape, 'float32');
}

function predictWith(model, spec) {
    for (const layer of model.layers) {
        const mine = layer.getWeights();
        if (mine.length === 0)
            continue;
        const given = spec.weights[layer.name];
        if (!given)
            throw new Error(`--predict: no weights for layer '${layer.name}'`);
        if (given.length !== mine.length)
            throw new Error(`--predict: layer '${layer.name}' has ${mine.length} weights, ${given.length} given`);
        const tensors = given.map(tensorOf);
        layer.setWeights(tensors); // refuses a shape that differs, naming it
        tf.dispose(tensors);
    }
    const inputs = spec.inputs.map(tensorOf);
    let outputs = model.predict(inputs.length === 1 ? inputs[0] : inputs);
    if (!Array.isArray(outputs))
        outputs = [outputs];
    const predictions = outputs.map(t => ({shape: t.shape, values: Array.from(t.dataSync())}));
    tf.dispose(inputs);
    tf.dispose(outputs);
    return predictions;
}

async function checkOne(file, spec) {
    const out = {file};
    let config;
    try {
        config = JSON.parse(fs.readFileSync(file, 'utf8'));
        // json.dump(model.to_json(), f): the model JSON as one string.
        if (typeof config === 'string')
            config = JSON.parse(config);
    } catch (e) {
        return Object.assign(out, {ok: false, error: `not JSON: ${e.message}`});
    }
    let model;
    try {
        await tf.setBackend('cpu');
        model = await tfl.models.modelFromJSON(config);
    } catch (e) {
        return Object.assign(out, {ok: false, error: String(e && e.message ? e.message : e)});
    }
    try {
        Object.assign(out, {
            ok: true,
            class_name: model.getClassName(),
            name: model.name,
            layers: model.layers.length,
            params: model.countParams(),
            trainable_params: countWeights(model.trainableWeights),
            inputs: model.inputs.map(shapeOf),
            outputs: model.outputs.map(shapeOf),
        });
        if (spec)
            out.predictions = predictWith(model, spec);
    } catch (e) {
        return {file, ok: false, error: String(e && e.message ? e.message : e)};
    } finally {
        model.dispose();
    }
    return out;
}

// --fast-orthogonal: the Orthogonal initializer (Keras' default for
// recurrent kernels) without its QR factorization, which tfjs computes in
// plain JavaScript: minutes for a bidirectional LSTM's kernels (corpus
// keras-functional 05). The weights keep their shapes and the initializer
// its config (read, checked, and its errors for a bad shape kept); only
// their starting values stop being orthogonal, which no check here reads.
function fastOrthogonal() {
    const Orthogonal = tfl.initializers.orthogonal({}).constructor;
    const apply = Orthogonal.prototype.apply;
    Orthogonal.prototype.apply = function (shape, dtype) {
        if (shape.length < 2 || (dtype !== undefined && dtype !== 'float32' && dtype !== 'int32'))
            return apply.call(this, shape, dtype);
        return tf.tidy(() => tf.mul(tf.scalar(this.gain), tf.randomNormal(shape, 0, 1, dtype, this.seed)));
    };
}

const usage = 'usage: check.js [--stand-in CLASS]... [--fast-orthogonal] [--predict SPEC.json] FILE.json...\n' +
    `stand-ins: ${Object.keys(standIns).join(', ')}\n`;

async function main(argv) {
    if (argv.length === 0 || argv[0] === '-h' || argv[0] === '--help') {
        process.stderr.write(usage);
        return argv.length === 0 ? 2 : 0;
    }
    const files = [], used = [];
    let spec = null;
    for (let i = 0; i < argv.length; i++) {
        if (argv[i] === '--stand-in') {
            const name = argv[++i];
            if (!standIns[name]) {
                process.stderr.write(`check.js: no stand-in for '${name}'\n` + usage);
                return 2;
            }
            standIns[name]();
            used.push(name);
        } else if (argv[i] === '--predict') {
            spec = JSON.parse(fs.readFileSync(argv[++i], 'utf8'));
        } else if (argv[i] === '--fast-orthogonal') {
            fastOrthogonal();
        } else {
            files.push(argv[i]);
        }
    }
    let status = 0;
    for (const file of files) {
        const result = await checkOne(file, spec);
        if (used.length)
            result.stand_ins = used;
        if (!result.ok)
            status = 1;
        process.stdout.write(JSON.stringify(result) + '\n');
    }
    return status;
}

main(process.argv.slice(2)).then(
    status => { process.exitCode = status; },
    e => { process.stderr.write(`check.js: ${e.stack || e}\n`); process.exitCode = 2; });
